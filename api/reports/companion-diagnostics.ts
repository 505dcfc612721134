/**
 * A task report's lines about a dashboard's companions (docs/migrating-dashboards.md,
 * Companions): differences ignored on request, companions that could not be carried, and what
 * was written (a kind an environment does not offer is on the outcome itself, `available: false`).
 * Read from the stored outcome as it is.
 */
/** A report line (report.ts's Diagnostic, kept apart so the two modules do not import each other). */
type Line<W> = { severity: 'warning' | 'info'; where: W & { step: string; object: string }; message: string };

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function companionDiagnostics<W extends object>(companions: unknown, where: W): Array<Line<W>> {
  const out: Array<Line<W>> = [];
  for (const k of Array.isArray(companions) ? companions.filter(isObj) : []) {
    const at = { ...where, step: 'companions', object: String(k.kind) };
    const items = Array.isArray(k.items) ? k.items.filter(isObj) : [];
    const label = (i: Record<string, any>) => `'${i.name}'${i.on ? ` on ${i.on}` : ''}`;
    const differing = items.filter((i) => i.action === 'create' || i.action === 'update' || i.action === 'missing');
    if (k.ignored_by_request === true && differing.length)
      out.push({
        severity: 'warning',
        where: at,
        message: `${k.kind} differ and the requester chose to ignore them: ${differing.map((i) => `${i.action} ${label(i)}`).join(', ')}`,
      });
    const missing = items.filter((i) => i.action === 'missing');
    if (missing.length && k.ignored_by_request !== true)
      out.push({
        severity: 'warning',
        where: at,
        message: `${k.kind} that could not be carried: ${missing.map((i) => `${label(i)}${i.note ? ` (${i.note})` : ''}`).join(', ')}`,
      });
    const written = items.filter((i) => i.done === true);
    if (written.length)
      out.push({
        severity: 'info',
        where: at,
        message: `${k.kind} written to the target: ${written.map((i) => `${i.action} ${label(i)}`).join(', ')}`,
      });
  }
  return out;
}

/**
 * A drift report's lines about a dashboard's companions (contracts/schedules.ts DriftItem): each
 * companion that differs, and each kind that was not compared with the reason (never drift, never
 * in sync).
 */
export function companionDriftDiagnostics<W extends object>(item: Record<string, unknown>, where: W): Array<Line<W>> {
  const out: Array<Line<W>> = [];
  const drift = Array.isArray(item.companions) ? item.companions.filter((c) => isObj(c) && typeof c.difference === 'string') : [];
  for (const c of drift)
    out.push({
      severity: 'warning',
      where: { ...where, step: 'companions', object: String(c.kind) },
      message: `drift: ${c.kind} '${c.name}'${c.on ? ` on ${c.on}` : ''} ${c.action}: ${c.difference}`,
    });
  for (const k of Array.isArray(item.companions_not_compared) ? item.companions_not_compared.filter(isObj) : []) {
    const dropped = Array.isArray(k.dropped) ? k.dropped.filter(isObj).map((d) => `'${d.name}'${d.note ? ` (${d.note})` : ''}`) : [];
    out.push({
      severity: dropped.length ? 'warning' : 'info',
      where: { ...where, step: 'companions', object: String(k.kind) },
      message: `${k.kind} not compared: ${k.reason}${dropped.length ? `; the source's ${dropped.join(', ')} cannot be held there` : ''}`,
    });
  }
  return out;
}
