// The errors a run cannot be set up with (exit 2 with one line, cli/errors.ts's table): raised below the CLI, by the
// preflight, the reference's start, the report folder, the client's command and the webhook runs; the CLI only prints them.

/** A usage or setup error: exit 2 with one line. */
export class SetupError extends Error {}
/** A command line that cannot be run as written (unknown option, missing argument, a port that cannot be listened on). */
export class UsageError extends SetupError {}
/** The container path cannot run (no engine, no image, a missing optional package). */
export class ContainerSetupError extends SetupError {}
