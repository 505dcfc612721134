import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { usage } from './exit-codes.ts';

/** What `switchyard login` stores: the API's address and one credential (an API key, or a sign-in's access token). */
export interface StoredConfig {
  url: string;
  api_key?: string;
  token?: string;
  username?: string;
}

export interface Connection {
  url: string;
  apiKey?: string;
  token?: string;
}

/** `$XDG_CONFIG_HOME/switchyard/config.json`, else `~/.config/switchyard/config.json`. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  return path.join(base, 'switchyard', 'config.json');
}

export function readConfig(file = configPath()): StoredConfig | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as StoredConfig;
  } catch {
    return undefined;
  }
}

/** Written readable by its owner only (0600, folder 0700): it holds a credential. */
export function writeConfig(config: StoredConfig, file = configPath()): string {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
  return file;
}

/** SWITCHYARD_URL with SWITCHYARD_API_KEY (or SWITCHYARD_TOKEN) override the stored config, so CI needs no file. */
export function resolveConnection(env: NodeJS.ProcessEnv = process.env): Connection {
  const stored = readConfig(configPath(env));
  const url = env.SWITCHYARD_URL || stored?.url;
  if (!url)
    throw usage('no Switchyard API configured: run `switchyard login --url <url> ...` or set SWITCHYARD_URL and SWITCHYARD_API_KEY');
  if (env.SWITCHYARD_API_KEY) return { url, apiKey: env.SWITCHYARD_API_KEY };
  if (env.SWITCHYARD_TOKEN) return { url, token: env.SWITCHYARD_TOKEN };
  if (stored && (!env.SWITCHYARD_URL || env.SWITCHYARD_URL === stored.url)) return { url, apiKey: stored.api_key, token: stored.token };
  return { url };
}
