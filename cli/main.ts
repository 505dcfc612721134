/**
 * `switchyard`: the command line for pipelines and people. It talks only to the public HTTP API
 * through the typed client, so it works against any deployment. Exit codes: 0 success, 1 failure,
 * 2 partial (some items failed), 3 bad usage.
 */
import { Command, CommanderError, Option } from 'commander';
import { createCtx } from './context.ts';
import { completionCommand } from './commands/completion.ts';
import { dashboardCommands } from './commands/dashboards.ts';
import { envCommands } from './commands/environments.ts';
import { gitCommands } from './commands/git.ts';
import { gitReviewCommands } from './commands/git-review.ts';
import { impactCommand } from './commands/impact.ts';
import { loginCommand } from './commands/login.ts';
import { mcpCommands } from './commands/mcp.ts';
import { releaseCommands } from './commands/release.ts';
import { scheduleCommands } from './commands/schedules.ts';
import { taskCommands } from './commands/tasks.ts';
import { validateCommand } from './commands/validate.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { OUTPUT_FORMATS, say, type OutputFormat } from './output.ts';

export async function main(argv: string[]): Promise<number> {
  const program = new Command('switchyard')
    .description('Run Apache Superset across environments from a terminal or a CI pipeline')
    .addOption(new Option('-o, --output <format>', 'how answers are printed').choices(OUTPUT_FORMATS).default('table'))
    .option('-q, --quiet', 'no progress or log lines on stderr')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  // Commander prints its own usage errors; every (sub)command exits through the override, so main decides the code.
  const ctx = () => createCtx(program.opts<{ output: OutputFormat; quiet?: boolean }>());
  loginCommand(program, ctx);
  envCommands(program, ctx);
  dashboardCommands(program, ctx);
  gitCommands(program, ctx);
  gitReviewCommands(program, ctx);
  impactCommand(program, ctx);
  releaseCommands(program, ctx);
  taskCommands(program, ctx);
  mcpCommands(program, ctx);
  scheduleCommands(program, ctx);
  validateCommand(program, ctx);
  completionCommand(program);
  const overrideAll = (c: Command) => {
    c.exitOverride();
    c.commands.forEach(overrideAll);
  };
  overrideAll(program);

  process.exitCode = undefined;
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and `help` exit 0; a group without its subcommand prints help and is a usage error.
      return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    }
    if (err instanceof CliError) {
      say(`switchyard: ${err.message}`);
      return err.exitCode;
    }
    say(`switchyard: ${(err as Error).stack ?? String(err)}`);
    return EXIT.FAILURE;
  }
}

process.exitCode = await main(process.argv.slice(2));
