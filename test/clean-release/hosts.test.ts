import { describe, expect, it } from 'vitest';
import { artifactDigest, portableDigest } from '../../lib/clean-release/digest.ts';
import { databaseHost, hostsInFiles, isTrusted, urlHosts } from '../../lib/clean-release/hosts.ts';
import { toYaml } from '../../lib/git/dashboard-files.ts';

describe('hosts a dashboard references', () => {
  it('reads the host of a SQLAlchemy URI; file databases have none', () => {
    expect(databaseHost('postgresql+psycopg2://u:XXXXXXXXXX@db.corp.example:5432/sales')).toBe('db.corp.example');
    expect(databaseHost('mysql://[::1]:3306/x')).toBe('::1');
    expect(databaseHost('trino://analytics.example/hive')).toBe('analytics.example');
    expect(databaseHost('sqlite:////var/lib/superset/x.db')).toBeNull();
  });

  it('finds URL hosts in text, without credentials or ports', () => {
    expect(urlHosts('see <iframe src="https://user:pw@Grafana.Example:3000/d/x"> and http://cdn.example/i.png')).toEqual([
      'grafana.example',
      'cdn.example',
    ]);
    expect(urlHosts('no links here')).toEqual([]);
  });

  it('names where each host appears: the database file, a markdown cell of the layout, a chart parameter', () => {
    const files = {
      'metadata.yaml': toYaml({ version: '1.0.0', type: 'Dashboard' }),
      'databases/d.yaml': toYaml({ uuid: 'd', sqlalchemy_uri: 'postgresql://u:XXX@db.corp.example/x' }),
      'dashboards/x.yaml': toYaml({
        uuid: 'x',
        position: { 'MARKDOWN-1': { meta: { code: 'Source: [wiki](https://wiki.corp.example/page)' } } },
      }),
      'charts/c.yaml': toYaml({ uuid: 'c', params: { url: 'https://tiles.example/{z}/{x}/{y}.png' } }),
    };
    expect(hostsInFiles(files)).toEqual([
      { host: 'tiles.example', role: 'url', where: 'charts/c.yaml: params.url' },
      { host: 'wiki.corp.example', role: 'url', where: 'dashboards/x.yaml: position.MARKDOWN-1.meta.code' },
      { host: 'db.corp.example', role: 'database', where: 'databases/d.yaml: sqlalchemy_uri' },
    ]);
  });

  it('trusts exact hosts and hosts below a wildcard domain, not the domain itself nor look-alikes', () => {
    const registry = ['git.corp.example', '*.db.corp.example'];
    expect(isTrusted('GIT.corp.example', registry)).toBe(true);
    expect(isTrusted('eu.db.corp.example', registry)).toBe(true);
    expect(isTrusted('db.corp.example', registry)).toBe(false);
    expect(isTrusted('evil-db.corp.example', registry)).toBe(false);
    expect(isTrusted('git.corp.example.evil', registry)).toBe(false);
  });
});

describe('digests', () => {
  const base = {
    'metadata.yaml': toYaml({ version: '1.0.0', timestamp: 'x' }),
    'charts/c.yaml': toYaml({
      uuid: 'c',
      slice_name: 'Sales',
      params: { datasource: '3__table', viz_type: 'table' },
      query_context: '{"datasource":{"id":3}}',
    }),
    'databases/d.yaml': toYaml({ uuid: 'd', sqlalchemy_uri: 'sqlite:////a.db' }),
  };

  it('the artifact digest changes with any byte of content, not with the export metadata', () => {
    expect(artifactDigest({ ...base, 'metadata.yaml': toYaml({ version: '1.0.0', timestamp: 'y' }) })).toBe(artifactDigest(base));
    expect(artifactDigest({ ...base, 'charts/c.yaml': base['charts/c.yaml'].replace('Sales', 'Sales!') })).not.toBe(artifactDigest(base));
  });

  it('the portable digest ignores what an environment assigns (ids, connections, empty defaults) but not content', () => {
    const elsewhere = {
      ...base,
      'charts/c.yaml': toYaml({
        uuid: 'c',
        slice_name: 'Sales',
        params: { datasource: '17__table', viz_type: 'table', annotation_layers: [] },
        query_context: '{"datasource":{"id":17}}',
      }),
      'databases/d.yaml': toYaml({ uuid: 'other', sqlalchemy_uri: 'postgresql://prod/x' }),
    };
    expect(portableDigest(elsewhere)).toBe(portableDigest(base));
    expect(
      portableDigest({ ...elsewhere, 'charts/c.yaml': elsewhere['charts/c.yaml'].replace('viz_type: table', 'viz_type: pie') }),
    ).not.toBe(portableDigest(base));
  });
});
