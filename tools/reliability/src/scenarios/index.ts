import type { Tally } from '../report.js';
import { aiSdkKills } from './ai-sdk.js';
import { crashScenario } from './crash.js';
import { delegateEmbedded, delegatePostgres } from './delegate.js';
import { batchFault, restartFault, suspendFault, terminalFault } from './faults.js';
import { firstUseEmbedded, firstUsePostgres } from './first-use.js';
import {
  agentsKillsEmbedded,
  agentsKillsPostgres,
  langGraphKillsEmbedded,
  langGraphKillsPostgres,
} from './framework-kills.js';
import { gatedKills } from './gated.js';
import { hostileFiles, hostilePostgres } from './hostile.js';
import { hostileHttpEmbedded, hostileHttpPostgres } from './hostile-http.js';
import { poolScale, stalledWorker } from './leases.js';
import { loadScenario } from './load.js';
import { notifyKillScenario, notifyScenario } from './notify.js';
import { policyKillsEmbedded, policyKillsPostgres } from './policy-kills.js';
import { queueInterleavings } from './queue.js';
import { fileRaces, pgRaces } from './races.js';
import { stopEmbedded, stopPostgres } from './stop.js';
import { takeoverEmbedded, takeoverPostgres } from './takeover.js';

/** One row of the summary table. */
export interface Scenario {
  name: string;
  /** Needs the PostgreSQL server (skipped without one outside CI, failed in CI). */
  server: boolean;
  run(tally: Tally): Promise<void>;
}

export const scenarios: Scenario[] = [
  {
    name: 'crash: continuation file store',
    server: false,
    run: (t) => crashScenario(t, 'continuation'),
  },
  { name: 'crash: checkpoint file store', server: false, run: (t) => crashScenario(t, 'session') },
  {
    name: 'crash: continuation postgres store',
    server: true,
    run: (t) => crashScenario(t, 'continuation-postgres'),
  },
  {
    name: 'first use: 16 processes at one barrier on a fresh database',
    server: true,
    run: firstUsePostgres,
  },
  {
    name: 'first use: 16 processes at one barrier on a fresh data folder',
    server: false,
    run: firstUseEmbedded,
  },
  { name: 'races: file stores', server: false, run: fileRaces },
  { name: 'races: postgres stores', server: true, run: pgRaces },
  { name: 'hostile input: files and wire', server: false, run: hostileFiles },
  { name: 'hostile input: postgres', server: true, run: hostilePostgres },
  {
    name: 'hostile input: approval center HTTP API, embedded',
    server: false,
    run: hostileHttpEmbedded,
  },
  {
    name: 'hostile input: approval center HTTP API, postgres',
    server: true,
    run: hostileHttpPostgres,
  },
  { name: 'db fault: markResumedBatch terminated', server: true, run: batchFault },
  { name: 'db fault: suspend write terminated', server: true, run: suspendFault },
  { name: 'db fault: wake terminal write terminated', server: true, run: terminalFault },
  // On a throwaway cluster of its own, not the machine's server.
  { name: 'db fault: server stopped under wake', server: false, run: restartFault },
  {
    name: "queue: random interleavings of the run queue's writes",
    server: true,
    run: queueInterleavings,
  },
  { name: 'lease: worker stalled past its lease', server: true, run: stalledWorker },
  { name: 'lease: 3 wakes × 16 workers, pools of 4', server: true, run: poolScale },
  { name: 'takeover: wake SIGKILLed mid-call, postgres', server: true, run: takeoverPostgres },
  { name: 'takeover: wake SIGKILLed mid-call, embedded', server: false, run: takeoverEmbedded },
  { name: 'stop: postgres, SIGTERM mid-call', server: true, run: stopPostgres },
  { name: 'stop: embedded, SIGTERM mid-call', server: false, run: stopEmbedded },
  { name: 'load: suspend → answer → resume', server: true, run: loadScenario },
  {
    name: 'notify: 1,000 questions, a receiver failing 20 %',
    server: true,
    run: notifyScenario,
  },
  { name: 'notify: wake SIGKILLed mid-delivery', server: true, run: notifyKillScenario },
  { name: 'kill: delegate workers, embedded', server: false, run: delegateEmbedded },
  { name: 'kill: delegate workers, postgres', server: true, run: delegatePostgres },
  { name: 'kill: approved gated calls, postgres', server: true, run: gatedKills },
  {
    name: 'kill: policy decisions, pre-approvals and the denial window, postgres',
    server: true,
    run: policyKillsPostgres,
  },
  {
    name: 'kill: policy decisions, pre-approvals and the denial window, embedded',
    server: false,
    run: policyKillsEmbedded,
  },
  { name: 'kill: langgraph resumes, postgres', server: true, run: langGraphKillsPostgres },
  { name: 'kill: langgraph resumes, embedded', server: false, run: langGraphKillsEmbedded },
  { name: 'kill: openai-agents resumes, postgres', server: true, run: agentsKillsPostgres },
  { name: 'kill: openai-agents resumes, embedded', server: false, run: agentsKillsEmbedded },
  { name: 'kill: ai-sdk turn resumes at 5 points, postgres', server: true, run: aiSdkKills },
];
