// The one list of the environment variables that carry a run's settings between processes (the CLI, the
// Playwright runner, its workers and reporters, the meta-suites), and the default names of the variables that
// hold secrets. Every reader goes through `setting()`; nothing else spells a CONFORMANCE_* name that is not
// listed here (tests/config.spec.ts). Each entry says what it holds and who sets it. A name ending in `_` is
// a prefix: the variables are that prefix followed by a suffix.

export const SETTINGS = {
  profile: { name: 'CONFORMANCE_PROFILE', about: 'path of the target profile the run uses (set by the CLI or global setup)' },
  profileChecked: { name: 'CONFORMANCE_PROFILE_SHA256', about: 'SHA-256 of the profile bytes a parent process validated (the CLI, global setup): its children skip the schema for those bytes (profile/profile.ts)' },
  baseUrl: { name: 'CONFORMANCE_BASE_URL', about: 'set by `conformance client` for the partner\'s command: the base URL of the sandbox (its recording proxy); set by `run` for a profile\'s commands (webhook.sender.trigger, a condition\'s on/off): the target\'s base URL' },
  profileDir: { name: 'CONFORMANCE_PROFILE_DIR', about: 'set by `run` for a profile\'s commands (webhook.sender.trigger, a condition\'s on/off): the folder of the profile file, where the commands also run' },
  apiKey: { name: 'CONFORMANCE_API_KEY', about: 'set by `conformance client` for the partner\'s command: the sandbox\'s full key (every scope; a secret); CONFORMANCE_PROFILE holds the keys of the other roles' },
  paceMs: { name: 'CONFORMANCE_PACE_MS', about: 'set by `conformance run --max-rps N`: the least time between two requests of one worker (observe/throttle.ts)' },
  out: { name: 'CONFORMANCE_OUT', about: 'report folder (default reports/out)' },
  command: { name: 'CONFORMANCE_COMMAND', about: 'set by the CLI (cli/main.ts): JSON array of the command line that started the run, recorded (secrets out) in the report\'s provenance' },
  seed: { name: 'CONFORMANCE_SEED', about: 'seed of the property-based runs (--seed)' },
  propertyRuns: { name: 'CONFORMANCE_PROPERTY_RUNS', about: 'set by `conformance run --property-runs N`: the cases each property draws beside its fixed examples (default 100)' },
  runsScale: { name: 'CONFORMANCE_RUNS_SCALE', about: 'multiplies the number of property cases (benchmarks)' },
  waivers: { name: 'CONFORMANCE_WAIVERS', about: 'path of the reviewed waiver file (--waivers)' },
  filter: { name: 'CONFORMANCE_FILTER', about: 'JSON of the --grep/--requirement filter, recorded in the report (PARTIAL)' },
  grep: { name: 'CONFORMANCE_GREP', about: 'set by `conformance run --grep/--requirement` (and the meta-suites): a regular expression over "<file> <case title>" choosing the cases (engine/planner.ts)' },
  shard: { name: 'CONFORMANCE_SHARD', about: 'set by `conformance run --shard I/N`: the cases of shard I of N, chosen by a hash of each case title (engine/planner.ts)' },
  casesOut: { name: 'CONFORMANCE_CASES_OUT', about: 'a file every declared case is appended to ("<file>\\t<case title>" per line) as suites load: with `playwright test --list`, the list of cases (a test runs a batch of them); tests/mutants.spec.ts reads it' },
  inFlight: { name: 'CONFORMANCE_IN_FLIGHT', about: 'set by `conformance run --in-flight N`: cases of a batch running at once in one worker (default 8)' },
  ciPublish: { name: 'CONFORMANCE_CI_PUBLISH', about: 'off: write no GitHub job summary or annotations (a step whose reports a later step merges and publishes, so the summary appears once per workflow run)' },
  audioExpiryWait: { name: 'CONFORMANCE_AUDIO_EXPIRY_WAIT', about: 'set by `conformance run --audio-expiry-wait S`: the longest wait, in seconds, for an audio URL to pass its expires_at (default 120)' },
  listWindow: { name: 'CONFORMANCE_LIST_WINDOW', about: 'set by `conformance run --list-window N`: the most encounters a whole-list check walks (default 200); a larger list is judged on date windows of at most N (observe/list-window.ts)' },
  evidence: { name: 'CONFORMANCE_EVIDENCE', about: 'full: evidence and output keep patient and clinical content (--evidence full); otherwise it is replaced by placeholders (record/redact.ts)' },
  strict: { name: 'CONFORMANCE_STRICT', about: '1: warnings fail the run (--strict)' },
  verbose: { name: 'CONFORMANCE_VERBOSE', about: '1: print every property seed (--verbose)' },
  progress: { name: 'CONFORMANCE_PROGRESS', about: 'terse: the CLI\'s one-line-per-failure progress instead of the runner\'s' },
  workers: { name: 'CONFORMANCE_WORKERS', about: 'Playwright workers of `npm test`' },
  db: { name: 'CONFORMANCE_DB', about: 'database of the reference: embedded, container or url' },
  sandbox: { name: 'CONFORMANCE_SANDBOX', about: '1 only when the harness started the reference itself (a sandbox run: the sender suite may make it send)' },
  callbackHost: { name: 'CONFORMANCE_CALLBACK_HOST', about: 'host name the target reaches the harness\'s webhook capture by (e.g. host.docker.internal for a target in a container); the capture then listens on every interface' },
  pgCache: { name: 'CONFORMANCE_PG_CACHE', about: 'as root, the folder of the embedded PostgreSQL binary cache the "postgres" user runs from when the project sits where that user cannot reach, and of the template of an initialised data folder (default: the temp folder); read by platform/embedded-postgres.ts' },
  pgTemplate: { name: 'CONFORMANCE_PG_TEMPLATE', about: '0: the reference\'s throw-away PostgreSQL cluster is initialised by initdb every time, not copied from the template of an earlier initdb; read by platform/embedded-postgres.ts' },
  dbImage: { name: 'CONFORMANCE_DB_IMAGE', about: 'PostgreSQL image of --db container and --reference container (default postgres:16-alpine)' },
  referenceImage: { name: 'CONFORMANCE_REFERENCE_IMAGE', about: 'image of the reference implementation for --reference container (default cec-reference:<hash of its build context>, built from reference-impl/Dockerfile when missing)' },
  harnessImage: { name: 'CONFORMANCE_HARNESS_IMAGE', about: 'image of the harness itself (the npm package, scripts/images/harness/Dockerfile), tagged cec-harness:<hash of its inputs> and built by scripts/container-images.sh; the container tests run it' },
  containersUnavailable: { name: 'CONFORMANCE_CONTAINERS_UNAVAILABLE', about: 'why scripts/container-images.sh could not provide an engine and images (the container tests skip with it)' },
  switchboardToken: { name: 'CONFORMANCE_SWITCHBOARD_TOKEN', about: 'token of the reference\'s switchboard (sandbox and meta-suites only; a secret)' },
  referencePid: { name: 'CONFORMANCE_REFERENCE_PID', about: 'pid of the reference global setup started' },
  waitReady: { name: 'CONFORMANCE_WAIT_READY', about: 'file the CLI writes when the target may be used (observe/ready.ts)' },
  setupError: { name: 'CONFORMANCE_SETUP_ERROR', about: 'why global setup could not provide a target' },
  breakerFile: { name: 'CONFORMANCE_BREAKER_FILE', about: 'file shared by the workers: consecutive transport failures of the target' },
  mutantsMatrix: { name: 'CONFORMANCE_MUTANTS_MATRIX', about: 'mutant meta-suite: JSON file of mutant → check ids' },
  variantsSet: { name: 'CONFORMANCE_VARIANTS_SET', about: 'variant meta-suite: JSON file of the variant bundles' },
  variantsProfiles: { name: 'CONFORMANCE_VARIANTS_PROFILES', about: 'variant meta-suite: JSON file of bundle → what its variants declare in the profile (webhook.headerWord), merged into the profile for that bundle' },
  variantsSingle: { name: 'CONFORMANCE_VARIANTS_SINGLE', about: 'variant meta-suite: 1 runs one bundle per variant instead of the packed bundles' },
  // Names of secrets rather than settings: the project proposes them, the user sets them, profiles and flags may name others.
  keyPrefix: { name: 'CONFORMANCE_KEY_', about: 'prefix of the variable `profile init` names for each credential role: CONFORMANCE_KEY_<ROLE> (secrets)' },
  webhookSigningSecret: { name: 'CONFORMANCE_WEBHOOK_SIGNING_SECRET', about: 'variable `profile init` names for the webhook signing secret (a secret)' },
  webhookScenario: { name: 'CONFORMANCE_WEBHOOK_SCENARIO', about: 'set by the harness for the trigger command of webhook.sender: the scenario the command is run for (one event each)' },
  webhookSubscription: { name: 'CONFORMANCE_WEBHOOK_SUBSCRIPTION', about: 'set for the trigger command: active, or inactive (finalize a transcript while the harness\'s subscription is not active)' },
  webhookReceiverUrl: { name: 'CONFORMANCE_WEBHOOK_RECEIVER_URL', about: 'set for the trigger command: the URL the harness listens at (where the deployment delivers)' },
  webhookEncounterId: { name: 'CONFORMANCE_WEBHOOK_ENCOUNTER_ID', about: 'set for the trigger command: the encounter of the document to finalize (resources.ambient_transcript_with_audio)' },
  webhookDocumentId: { name: 'CONFORMANCE_WEBHOOK_DOCUMENT_ID', about: 'set for the trigger command: the document to finalize (resources.ambient_transcript_with_audio)' },
  webhookSecret: { name: 'CONFORMANCE_WEBHOOK_SECRET', about: 'default variable of the secret of `webhook receiver` (--secret-env names another; a secret)' },
} as const satisfies Record<string, { name: `CONFORMANCE_${string}`; about: string }>;

export type Setting = keyof typeof SETTINGS;

/** The value of a setting, or undefined when unset or empty. */
export function setting(key: Setting, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = env[SETTINGS[key].name];
  return v === undefined || v === '' ? undefined : v;
}

/** The variable name of a setting, for the processes that set it. */
export function settingName(key: Setting): string {
  return SETTINGS[key].name;
}
