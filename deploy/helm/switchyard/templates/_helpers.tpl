{{- define "switchyard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "switchyard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "switchyard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "switchyard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component (api or worker): pass (list $ "api"). */}}
{{- define "switchyard.selector" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ include "switchyard.name" $ }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "switchyard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "switchyard.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "switchyard.secretName" -}}
{{- default (printf "%s-secrets" (include "switchyard.fullname" .)) .Values.existingSecret -}}
{{- end -}}

{{- define "switchyard.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The settings every Switchyard container reads: ConfigMap, Secret, and what the chart decides. */}}
{{- define "switchyard.env" -}}
envFrom:
  - configMapRef:
      name: {{ include "switchyard.fullname" . }}
  - secretRef:
      name: {{ include "switchyard.secretName" . }}
{{- end -}}

{{- define "switchyard.volumeMounts" -}}
volumeMounts:
  - name: data
    mountPath: /var/lib/switchyard
  - name: tmp
    mountPath: /tmp
{{- if .Values.temporalTls.existingSecret }}
  - name: temporal-tls
    mountPath: /etc/switchyard/temporal-tls
    readOnly: true
{{- end }}
{{- end -}}

{{- define "switchyard.volumes" -}}
volumes:
  - name: data
{{- if .Values.persistence.enabled }}
    persistentVolumeClaim:
      claimName: {{ .Values.persistence.existingClaim | default (printf "%s-data" (include "switchyard.fullname" .)) }}
{{- else }}
    emptyDir: {}
{{- end }}
  - name: tmp
    emptyDir: {}
{{- if .Values.temporalTls.existingSecret }}
  - name: temporal-tls
    secret:
      secretName: {{ .Values.temporalTls.existingSecret }}
      defaultMode: 0440
{{- end }}
{{- end -}}

{{/* The pod's shared spec: service account, security, the migration init step, volumes. */}}
{{- define "switchyard.podCommon" -}}
serviceAccountName: {{ include "switchyard.serviceAccountName" . }}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
initContainers:
  - name: migrate
    image: {{ include "switchyard.image" . }}
    imagePullPolicy: {{ .Values.image.pullPolicy }}
    command: ["node", "scripts/migrate.ts"]
    {{- include "switchyard.env" . | nindent 4 }}
    securityContext:
      {{- toYaml .Values.securityContext | nindent 6 }}
    resources:
      {{- toYaml .Values.migrations.resources | nindent 6 }}
    {{- include "switchyard.volumeMounts" . | nindent 4 }}
{{ include "switchyard.volumes" . }}
{{- end -}}

{{/* Scheduling fields of one component's values: nodeSelector, tolerations, affinity. */}}
{{- define "switchyard.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
