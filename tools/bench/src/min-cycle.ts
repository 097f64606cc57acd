// The "min-cycle" floor (DESIGN.md, Benchmarks): the least durable work a correct cycle needs,
// one statement per step in bare postgres.js on one connection, on tables shaped like ours.
import { randomUUID } from 'node:crypto';
import type { Message } from '@x/wire';
import postgres from 'postgres';

const SCHEMA = `
create schema if not exists bench_min;
create table if not exists bench_min.pauses (
  token text primary key, conversation_id text not null, run_id text not null,
  question text not null, tool_call_id text not null, answer jsonb,
  created_at timestamptz not null default now(), answered_at timestamptz);
create table if not exists bench_min.suspensions (
  interaction_id text primary key, run_id text not null, transcript jsonb not null,
  resolved boolean not null default false,
  created_at timestamptz not null default now(), resolved_at timestamptz);
create table if not exists bench_min.runs (
  run_id text primary key, conversation_id text not null, status text not null,
  interaction_id text, input jsonb, attempts integer not null default 0, lease_owner text,
  due_at timestamptz, transcript jsonb,
  created_at timestamptz not null default now(), updated_at timestamptz not null default now(),
  finished_at timestamptz);
create index if not exists runs_claimable_idx on bench_min.runs (due_at, run_id)
  where status in ('ready', 'running');`;

const ANSWER = { action: 'accept', content: 'Lisbon' };

/** What the resumed turn adds: the answer as the tool's result, and the model's last reply. */
function added(toolUseId: string): Message[] {
  return [
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: 'Lisbon' }] },
    {
      role: 'assistant',
      content: [{ type: 'text', text: 'Starting the trip from Lisbon. Done.' }],
    },
  ];
}

/** The floor: creates its tables in `bench_min` and returns its cycle (suspend, answer, claim, finish). */
export async function minCycleFloor(url: string) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  await sql.unsafe(SCHEMA);
  let i = 0;
  return {
    cycle: async (messages: Message[]) => {
      const token = randomUUID();
      const runId = `run-${token}`;
      const conversationId = `conv-min-${i++}`;
      const owner = `bench/w1#${i}`;
      const ask = messages.at(-1)?.content.find((b) => b.type === 'tool_use');
      if (ask?.type !== 'tool_use') throw new Error('the transcript must end with a tool call');
      await sql`
        with pause as (
          insert into bench_min.pauses (token, conversation_id, run_id, question, tool_call_id)
          values (${token}, ${conversationId}, ${runId}, 'Which city should the trip start from?', ${ask.id})
        ), suspension as (
          insert into bench_min.suspensions (interaction_id, run_id, transcript)
          values (${token}, ${runId}, ${sql.json(messages as postgres.JSONValue)})
        )
        insert into bench_min.runs (run_id, conversation_id, status, interaction_id)
        values (${runId}, ${conversationId}, 'waiting', ${token})`;
      const ready = await sql`
        with pause as (
          update bench_min.pauses set answer = ${sql.json(ANSWER)}, answered_at = now()
          where token = ${token} and answered_at is null returning run_id
        )
        update bench_min.runs r set status = 'ready', input = ${sql.json(ANSWER)}, due_at = now(), updated_at = now()
        from pause where r.run_id = pause.run_id and r.status = 'waiting' returning r.run_id`;
      if (ready.length !== 1) throw new Error('the floor answer readied no run');
      // Asynchronous commit, as our claim: losing it in a crash only makes the run claimable again.
      const [claimed] = await sql<{ run_id: string; transcript: Message[] }[]>`
        with next as (
          select run_id from bench_min.runs where status in ('ready', 'running') and due_at <= now()
          order by due_at, run_id limit 1 for update skip locked
        )
        update bench_min.runs r set status = 'running', lease_owner = ${owner},
          due_at = now() + interval '60 seconds', attempts = r.attempts + 1, updated_at = now()
        from next where r.run_id = next.run_id and set_config('synchronous_commit', 'off', true) is not null
        returning r.run_id, (select s.transcript from bench_min.suspensions s where s.interaction_id = r.interaction_id) as transcript`;
      if (claimed?.run_id !== runId || claimed.transcript.length !== messages.length) {
        throw new Error(`the floor claimed ${claimed?.run_id ?? 'nothing'}, not ${runId}`);
      }
      const finished = await sql`
        with run as (
          update bench_min.runs set status = 'completed', lease_owner = null, due_at = null,
            transcript = ${sql.json(added(ask.id) as postgres.JSONValue)}, finished_at = now(), updated_at = now()
          where run_id = ${runId} and status = 'running' and lease_owner = ${owner}
          returning interaction_id
        )
        update bench_min.suspensions s set resolved = true, resolved_at = now()
        from run where s.interaction_id = run.interaction_id and not s.resolved
        returning s.interaction_id`;
      if (finished.length !== 1) throw new Error('the floor finish lost its run');
    },
    close: () => sql.end({ timeout: 5 }),
  };
}
