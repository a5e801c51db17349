// The reaper of `--reference container`'s containers and network: a process of its own, it judges nothing.
// A detached process that removes what one run started in the container
// engine once the run's end of its stdin closes, however the run ended (normal stop, Ctrl-C, SIGKILL).
// testcontainers' own reaper (Ryuk) does this where its image can be pulled; where it cannot (no registry, or
// TESTCONTAINERS_RYUK_DISABLED=true) nothing else would, so the harness never relies on it.
//   node engine/reference/container-reaper.ts LABEL=VALUE
// stdin lines: `network <id>` (networks carry no label of ours). Containers are found by the label.
// On stdin's end: every container with the label is removed (forced, with its anonymous volumes), then the networks.
import { getContainerRuntimeClient } from 'testcontainers';
import type Dockerode from 'dockerode';

const [label] = process.argv.slice(2);
if (!label || !label.includes('=')) {
  process.stderr.write('usage: node engine/reference/container-reaper.ts LABEL=VALUE\n');
  process.exit(2);
}
// Its own process group already keeps a terminal's Ctrl-C away; a signal to the group must not cut the clean-up short.
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => {});

const networks = new Set<string>();
let buffered = '';
process.stdin.on('data', (d: Buffer) => {
  buffered += d.toString('utf8');
  const lines = buffered.split('\n');
  buffered = lines.pop() ?? '';
  for (const line of lines) {
    const m = /^network ([0-9a-f]{12,64})$/.exec(line.trim());
    if (m) networks.add(m[1]);
  }
});

async function reap(): Promise<void> {
  const client = await getContainerRuntimeClient();
  const docker = (client.container as unknown as { dockerode: Dockerode }).dockerode;
  const found = await docker.listContainers({ all: true, filters: { label: [label] } });
  await Promise.all(found.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
  for (const id of networks) await docker.getNetwork(id).remove().catch(() => undefined);
}

process.stdin.on('end', () => {
  reap().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`container-reaper: ${(e as Error).message}\n`);
      process.exit(1);
    },
  );
});
process.stdin.resume();
