// Child process of the memory row: opens the runner's storage, settles, then measures how
// far one wake (claim, load, resume a 10,000-message transcript, model, mark resolved) lifts
// the process above that baseline. Prints one JSON line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStorage } from 'runner/dist/storage.js';
import { wakeOnce } from './runner-cycle.js';

const [url, token] = process.argv.slice(2);
if (!url || !token) throw new Error('usage: wake-memory.js DATABASE_URL TOKEN');
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const dataDir = mkdtempSync(path.join(tmpdir(), 'x-bench-wake-'));
const storage = await openStorage({ dataDir, databaseUrl: url, command: 'bench', log: () => {} });
try {
  await storage.pauses().listPendingAll(1); // connection open, statements warm
  gc();
  gc();
  const before = process.memoryUsage();
  const maxRssBefore = process.resourceUsage().maxRSS * 1024;
  await wakeOnce(storage, token);
  const maxRssAfter = process.resourceUsage().maxRSS * 1024;
  const after = process.memoryUsage();
  console.log(
    JSON.stringify({
      baselineRss: before.rss,
      baselineHeap: before.heapUsed,
      maxRssBefore,
      maxRssAfter,
      heapAfter: after.heapUsed,
    }),
  );
} finally {
  await storage.close();
  rmSync(dataDir, { recursive: true, force: true });
}
