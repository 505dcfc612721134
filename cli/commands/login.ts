import fs from 'node:fs';
import type { Command } from 'commander';
import { connect, unwrap } from '../api.ts';
import { writeConfig, type StoredConfig } from '../config.ts';
import { act, type Ctx } from '../context.ts';
import { EXIT, usage } from '../exit-codes.ts';
import { print, say } from '../output.ts';

export function loginCommand(program: Command, ctx: () => Ctx): void {
  program
    .command('login')
    .description('Check a credential against the API and store it in ~/.config/switchyard/config.json (mode 0600)')
    .requiredOption('--url <url>', 'the Switchyard API, e.g. https://switchyard.example.com', process.env.SWITCHYARD_URL)
    .option('--api-key <key>', 'an API key (sy_...) created by an admin')
    .option('--username <name>', 'sign in with a username and password instead')
    .option('--password <password>', 'the password (prefer --password-stdin or SWITCHYARD_PASSWORD)')
    .option('--password-stdin', 'read the password from stdin')
    .action(
      act(async (opts: { url: string; apiKey?: string; username?: string; password?: string; passwordStdin?: boolean }) => {
        if (!/^https?:\/\//.test(opts.url)) throw usage('--url must start with http:// or https://');
        const url = opts.url.replace(/\/+$/, '');
        let stored: StoredConfig;
        if (opts.apiKey) {
          stored = { url, api_key: opts.apiKey };
        } else if (opts.username) {
          const password = opts.passwordStdin
            ? fs.readFileSync(0, 'utf8').replace(/\r?\n$/, '')
            : (opts.password ?? process.env.SWITCHYARD_PASSWORD);
          if (!password) throw usage('give --password-stdin, --password or SWITCHYARD_PASSWORD with --username');
          const token = await unwrap(
            connect({ url }).client.POST('/api/auth/login', {
              body: { username: opts.username, password } as never,
              bodySerializer: (b: Record<string, string>) => new URLSearchParams(b).toString(),
              headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
            }),
          );
          stored = { url, token: (token as { access_token: string }).access_token, username: opts.username };
        } else {
          throw usage('give --api-key, or --username with a password');
        }
        const me = await unwrap(connect({ url, apiKey: stored.api_key, token: stored.token }).client.GET('/api/auth/me'));
        const file = writeConfig(stored);
        if (!ctx().quiet) say(`signed in to ${url} as ${(me as { username?: string }).username ?? 'unknown'}; saved in ${file}`);
        print(ctx().format, { url, username: (me as { username?: string }).username ?? null, config: file });
        return EXIT.OK;
      }),
    );
}
