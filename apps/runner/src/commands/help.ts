import { DEFAULT_GRACE_MS } from '@x/continuation-postgres';
import { describeVariables, OPTION_DEFAULTS, VARIABLES } from '../config/index.js';
import { MAX_ANSWER_TEXT } from '../executive/answer-limit.js';

/** The runner's help texts, one per command. */
export const HELP: Record<string, string> = {
  main: `runner — durable human-in-the-loop agent runs, interactive and unattended

usage: runner <command> [options]    (also: runner help <command>, runner --version)

commands:
  demo                          the scripted trip planner, start to finish, unattended
  chat [--session ID] [--resume] [--list]
                                interactive chat; questions are asked at the prompt
  exec "GOAL" | --goal-file PATH [--conversation ID] [--replace]
                                unattended run until it completes or waits on a person
  answer TOKEN --accept TEXT | --arguments JSON | --option N | --decline [TEXT] | --cancel
  answer --batch FILE.json      answer pending questions (a batch is all or nothing)
  wake [--once] [--concurrency N] [--grace DURATION] [--metrics-port N]
                                resume answered runs (the executive's wake loop)
  runs [--conversation C] [--status S]
                                the recorded runs and how each stands or ended
  show CONVERSATION             a conversation's runs: outcome, attempts, questions, transcript
  retry RUN                     make a failed run ready again
  stop CONVERSATION             close every open question of a conversation
  serve [--port N] [--host ADDR] [--token T] [--operator NAME] [--no-wake]
                                the approval center: a web page and JSON API for answering
  paused-states list [--all | --conversation C] [--limit N]
  paused-states get TOKEN       one question: pending, or its answer and who gave it
  paused-states purge --older-than 7d [--dry-run]
  operators add NAME [--role ROLE]... | list | revoke NAME | rotate NAME
                                the people who sign in to serve with an API key
  audit [--conversation C] [--since T]
                                the audit log: who asked and answered what, through what
  audit verify | head           check the log for tampering; its latest hash, for anchoring
  notifications list [--status pending|delivered|failed] | retry ID
                                the notification outbox: what was sent, what failed and why
  migrate                       apply the database migrations
  policy test DIR | explain TOKEN   fixture files checked (CI); why a question was asked

options for every command (--data, --model, --json and --log-format may also come before it):
  --data DIR     the embedded default's data folder (default ${VARIABLES.RUNNER_DATA.default}, or RUNNER_DATA; not
                 empty). Only exec, chat (not --resume), serve, migrate and operators add
                 create a missing one (and say so); the other commands say it does not exist
  --model ID     (default ${VARIABLES.RUNNER_MODEL.default}, or RUNNER_MODEL) scripted:trip | scripted:tools |
                 scripted:siblings | scripted:team (workers w1..w3, two of which ask) |
                 scripted:payment (an approval for the audience the model names) |
                 scripted:gated (exec only: transfer_funds, send_email run once approved) |
                 anthropic:MODEL | openai:MODEL
  --json         one JSON object per line, for scripts
  --log-format F text (the default) or json (or RUNNER_LOG_FORMAT): one pino object a line,
                 {"level","time","pid","msg","event", and the runId, conversationId and
                 token it is about}; errors on stderr
  -h, --help     help for the command
  --version      the runner's version

help topics (runner help TOPIC):
  environment    every environment variable by group, its meaning and default; storage,
                 real models and telemetry
  exit-codes     what each exit code means, and the approval center's statuses

exit codes: 0 done · 1 failed · 2 bad usage or input · 3 no such question, run, conversation
or session · 4 unavailable · 5 conflict · 6 forbidden · 7 expired (runner help exit-codes).
hints (answer, chat --resume, retry) are printed as this command was started (runner, node
path/to/cli.js, npx pnpm@12.4.2 runner, ...), with its --data folder: they run as printed.
Every command's help and topic on one page: apps/runner/docs/cli.md`,

  demo: `usage: runner demo [--data DIR] [--json]

Runs the scripted trip planner unattended on the embedded default (or DATABASE_URL):
exec → answer → wake, three times, until the trip is booked. Uses a fresh data folder
(default .runner/demo) each time.`,
  chat: `usage: runner chat [--session ID] [--resume] [--data DIR] [--model ID]
       runner chat --list [--data DIR] [--json]

Interactive chat. Type a message; when the model asks (ask_user) or wants an approval
(approve), answer at the prompt:
  TEXT        accept with this answer        N        choose option N
  /decline [REASON]                          /cancel  end the turn without an answer
  /quit       leave (also Ctrl-D)
The transcript is checkpointed after every turn and the pending question is saved before
it is asked, so a crash loses nothing: \`runner chat --resume --session ID\` asks the same
question again and completes the turn; \`runner chat --resume\` alone resumes the session
whose question was saved last; \`runner chat --list\` lists the sessions of the data folder,
each with its open question and the command that resumes it. Leaving while a question
waits (/quit, Ctrl-C, Ctrl-D) keeps it saved and prints the exact command that resumes it.
On a data folder a running \`runner serve\` holds, the turns run in serve and the lines are
still typed here.`,
  exec: `usage: runner exec "GOAL" [--conversation ID] [--replace] [--requester NAME] [--pre-approve SCOPE]... [--data DIR] [--model ID] [--json]
       runner exec --goal-file PATH [--conversation ID] ...

--goal-file PATH  read the goal from a file (- for standard input), for a goal too long
                  for a command line

Runs GOAL unattended until the turn completes or waits on a person. When it waits, the
question is stored (token = interaction id) with the full transcript, and the command
prints the token and exits 0 with status "waiting". Answer it with \`runner answer\`, then
\`runner wake\` resumes it.

--conversation ID  the conversation to run in: 1 to 200 letters, digits, '.', '_' and '-'
                   (default: a new id, made and printed)
--replace          start over on a conversation that still has an open question or an
                   unfinished run (waiting, answered, running, or failed): they are stopped
                   first, as \`runner stop\` does. Without it such a conversation is refused
                   (exit 5, nothing changed), so a question is never cancelled by accident.
--requester NAME   the person the run acts for, kept with each question it asks; with
                   RUNNER_REQUESTER_MAY_NOT_APPROVE naming the question's tool (or *), the
                   operator of that name may not answer it (403 forbidden).
--pre-approve SCOPE  a call the run may make with no person where the policies would ask:
                   TOOL, or TOOL={"arg":value,...} for the calls holding those arguments;
                   never one a rule denies; at most 20, each at most 1,000 characters.

Each gated call and question is decided by one policy set: the question variables
(RUNNER_AUDIENCE, RUNNER_QUORUM, ...) and RUNNER_POLICY's Cedar files. Allow runs it with no
person, deny tells the model why, ask asks as the matching rules say.`,
  answer: `usage: runner answer TOKEN --accept TEXT | --arguments JSON | --option N | --decline [TEXT] | --cancel
       runner answer --batch FILE.json

--accept TEXT     the answer          --option N   the Nth of the question's options
--arguments JSON  approve a gated call (send_email, transfer_funds) with these arguments
                  instead of the model's, checked against the tool's schema (exit 2 if
                  they do not fit); --accept '' approves it as the model asked
--decline [TEXT]  the person declines (the model is told so, with TEXT if given)
--cancel          end the run without resuming it
--batch FILE      answers for several questions, all or nothing:
                  [{"token": "...", "action": "accept", "content": "Lisbon"}, ...]
Nothing is changed when an answer is refused: exit 3 for an unknown token; exit 5 for a
question answered already, saying how, by whom and when; exit 7 for an answer after the
question's deadline (see RUNNER_DEADLINE). An answer whose content is over ${MAX_ANSWER_TEXT}
(code points; the same limit everywhere an answer comes in: the API, chat, links) or holds a
NUL or a lone surrogate is refused (exit 2), naming the limit. A question that needs a quorum
(RUNNER_QUORUM) records each person's answer once and resolves at the M-th approval: until
then the answer says "approval recorded: 1 of 2 approvals (ada), 1 more needed" and the run
waits. The approvals approve one answer, the first accept's (for a gated call, its
arguments): an accept of other content is refused (exit 2).`,
  wake: `usage: runner wake [--once] [--concurrency N] [--grace DURATION] [--metrics-port N]
                   [--metrics-host ADDR] [--data DIR] [--json]

Resumes answered runs. Each ready run is claimed by exactly one worker of one wake process
(one short statement that sets a lease), resumed with no database transaction open while
the model runs, and its end recorded only while the worker still holds the lease: the run
completes, waits on a new question, or is cancelled. The lease is renewed while the model
streams; a worker that stalls past it loses the run to another and writes nothing. A run
whose worker process is gone (killed, crashed) is taken over at once, not when its lease
expires: on PostgreSQL as soon as that process's session ends, on the embedded default by the
next process to open the data folder. A failed model call is retried with backoff, and
every attempt counts (RUNNER_MAX_ATTEMPTS, default ${VARIABLES.RUNNER_MAX_ATTEMPTS.default}), those that ended with the worker gone
too; then the run fails, saying how many ended which way: see \`runner runs --status failed\`
and \`runner retry RUN\`. Waits for answers (LISTEN/NOTIFY on PostgreSQL, polling on the
embedded default) until Ctrl-C; --once resumes what is ready now and exits (1 if an attempt
failed). When nothing is left to claim but other workers hold runs, both say how many, by
which worker, and when each becomes claimable (--json: a "leased" event). --concurrency N
runs N workers (up to 64), also on the embedded default. A waiting run is also taken at its
question's deadline, reminder and escalation (RUNNER_DEADLINE, RUNNER_REMIND,
RUNNER_ESCALATE): each is applied once ("question-reminded", "question-escalated" events)
and the run waits again. On a data folder a running \`runner serve\` holds, serve resumes
the answered runs itself: wake says so and exits 0.

--grace DURATION  how long a stopping wake lets turns in flight finish (default ${DEFAULT_GRACE_MS / 1000}s; e.g.
                  500ms, 2m, 0s). SIGTERM or Ctrl-C (SIGINT) stops gracefully: nothing more
                  is claimed, turns in flight may finish within the grace, and a turn still
                  running then is cut (its model call aborted, nothing of it written) and its
                  run released, ready at once for another worker without counting an
                  attempt; then exit 0. A second signal stops at once (exit 128 + the
                  signal's number); the runs it held are taken over as when it is killed.
--metrics-port N  serve Prometheus metrics at http://ADDR:N/metrics, without sign-in (0 picks
                  a free port; the line "metrics on URL" says which)
--metrics-host ADDR  where that listens; default ${OPTION_DEFAULTS.host} (this machine only)`,
  runs: `usage: runner runs [--conversation C] [--status S] [--limit N] [--json]

The recorded unattended runs, newest first: status (running, waiting, ready, completed,
cancelled, failed), attempts, the lease holder of a running one (or that its process is
gone: the run is claimable now), the last error. A run is one \`exec\` of a conversation,
through all of its questions until it ends.`,
  show: `usage: runner show CONVERSATION [--json]

Each run of the conversation, oldest first: how it stands or ended, its attempts and last
error, its questions with their answers, and its transcript (the whole of it once
completed; up to the open question while it waits).`,
  retry: `usage: runner retry RUN [--json]

Makes a failed run ready again, its attempts counted from zero; a running wake (or
\`runner wake --once\`) resumes it. Exit 3 for an unknown run, 5 (conflict) for one that is
not failed.`,
  stop: `usage: runner stop CONVERSATION [--data DIR] [--json]

Closes every open question of the conversation with the auto-terminated marker, marks its
saved turns resolved and cancels its runs, atomically. Nothing of it will be resumed (a
worker running one of its runs has its result refused). Exit 3 for an unknown conversation.`,
  serve: `usage: runner serve [--port N] [--host ADDR] [--token TOKEN] [--public-url URL] [--no-wake]
                    [--grace DURATION] [--metrics-port N] [--metrics-host ADDR] [--data DIR] [--json]

The approval center: a web page at / and a JSON API under /api for answering the pending
questions of every conversation, live (Server-Sent Events at /api/events). Prints the URL
it listens on (--port 0 picks a free port). It also resumes answered runs, like
\`runner wake\` (--no-wake to leave that to separate wake processes on PostgreSQL); on the
embedded default it must, since one process owns the data folder. There it also listens
on DIR/serve.sock (mode 0600, the folder's owner only): exec, answer, stop, retry, runs,
show, paused-states, audit, operators and chat of other terminals go through it (saying
"via serve (pid N)" on stderr; chat's lines are still typed at its own terminal), and
migrate and wake have nothing to do (under --no-wake, wake is refused: exit 4).

Who may use it: once \`runner operators add\` made an operator, every API request needs a
live operator's key: "Authorization: Bearer KEY", or a session of the page, which signs in
with the key (POST /api/sign-in) and keeps only a random session id in an HttpOnly,
SameSite=Strict cookie for RUNNER_SESSION_TTL (8h); its writes carry the session's CSRF
token (X-CSRF-Token, from GET /api/session), and POST /api/sign-out ends it. Failed
sign-ins get 429 after RUNNER_SIGN_IN_FAILURES per address or
RUNNER_SIGN_IN_FAILURES_PER_NAME per operator within RUNNER_SIGN_IN_WINDOW. An admin
answers anything and stops conversations; an operator answers the questions whose audience
(RUNNER_AUDIENCE) admits their name or a role, and sees the others read-only (GET
/api/pauses flags each with canAnswer, and readOnly says why not: viewer, audience, or
requester when separation of duties bars them); a viewer reads (403 forbidden on a write;
the page shows no answer form). Without operators and without --token, on this machine
only, the page works for one local operator without a key. With RUNNER_OIDC_ISSUER set, the users of that OpenID provider
sign in too, by a bearer JWT or through /auth/oidc/login on the page, their roles mapped
from a claim (RUNNER_OIDC_*, in \`runner help environment\`); then every request needs a key or a JWT.

--port N        default ${OPTION_DEFAULTS.port}
--host ADDR     default ${OPTION_DEFAULTS.host} (this machine only). Any other address needs operators,
                a token or RUNNER_OIDC_ISSUER, else serve refuses to start.
--token TOKEN   (or RUNNER_TOKEN) a shared key, kept for compatibility: it signs in as an
                admin named --operator, beside the operators' own keys.
--public-url URL (or RUNNER_PUBLIC_URL) the address people open, when a TLS proxy sits in
                front: an https:// one marks the session cookie Secure, and
                URL/auth/oidc/callback is the page's OIDC redirect URI unless
                RUNNER_OIDC_REDIRECT_URI names another.
--operator NAME (or RUNNER_OPERATOR) who answers with the shared token (or, without
                operators, on this machine), recorded with every answer as answeredBy;
                default: the OS user running serve. \`runner answer\` records the OS user
                running it, through the channel cli, with no audience check.
--grace DURATION
                on SIGTERM or Ctrl-C: how long requests and resumes in flight may take to
                finish (default ${DEFAULT_GRACE_MS / 1000}s). New connections are refused and nothing more is
                claimed at once; then resumes still running are cut and released, as in
                \`runner wake\`, connections are closed, and serve exits 0. A second
                signal stops at once.
--max-connections N
                (or RUNNER_MAX_CONNECTIONS) connections kept open at once, event streams
                included (default ${VARIABLES.RUNNER_MAX_CONNECTIONS.default}): one more is answered 503
                too_many_connections, with Retry-After, and closed
--headers-timeout DURATION
                (or RUNNER_HEADERS_TIMEOUT) how long a request's headers may take to arrive,
                from its first byte or from the connection (default ${VARIABLES.RUNNER_HEADERS_TIMEOUT.defaultText})
--body-timeout DURATION
                (or RUNNER_BODY_TIMEOUT) how long its body may take on top of that: the
                whole request arrives within both (default ${VARIABLES.RUNNER_BODY_TIMEOUT.defaultText}); a request
                late is answered 408 request_timeout and its connection closed
--idle-timeout DURATION
                (or RUNNER_IDLE_TIMEOUT) how long a kept-alive connection may wait idle for
                its next request before it is closed (default ${VARIABLES.RUNNER_IDLE_TIMEOUT.defaultText})
--trust-proxy ADDR[,ADDR...]
                (or RUNNER_TRUST_PROXY) the proxies in front of serve, as addresses or
                subnets (10.0.0.0/8): a request from one is taken to come from the client its
                X-Forwarded-For names, so failed sign-ins lock out that client, not everyone
                behind the proxy (the limits of RUNNER_SIGN_IN_FAILURES). Default none: the
                header is ignored and the connection's address counts
--metrics-port N, --metrics-host ADDR
                also serve the Prometheus metrics (GET /metrics, for admins) on a listener
                of their own, without sign-in, at ADDR (default ${OPTION_DEFAULTS.host}):N

API: GET /api/pauses?limit=N · GET /api/pauses/TOKEN · POST /api/pauses/TOKEN/answer
{"action":"accept"|"decline"|"cancel","content":"..."} · POST /api/pauses/answer-batch
{"answers":[{"token","action","content"}]} (all or nothing) · GET /api/recent?limit=N ·
POST /api/conversations/ID/stop · GET /api/runs · GET /api/runs/ID · POST /api/runs
{"goal","conversation","model"} (with "Accept: application/x-ndjson": its events as they
happen, then its result) · POST /api/runs/ID/retry · GET /api/events (SSE; it ends with a
signed-out event once its key is revoked or rotated, or its session signed out or expired) ·
GET /api/session ·
POST /api/sign-in {"key"} · POST /api/sign-out · GET /metrics (admins; Prometheus text). Writes take application/json from this server's
own origin (and, by the page's session, its CSRF token); bodies up to 256 KiB (413 names
the limit), an answer's content up to ${MAX_ANSWER_TEXT}; text holding a NUL or a lone
surrogate, or a body that is not UTF-8, is 400 (404 for a token); a request with two Host
headers is 400; requests pipelined on one connection are answered one after the other. Errors
(also 400, 408 and 431 of malformed, late or oversized requests): {"error":{"code","message"}}, with the
statuses of the exit codes (an unknown conversation's stop is 404 not_found, as
\`runner stop\` is exit 3); an answer to a question answered already is 409
already_answered, with "answered": each question's token, answer, answeredBy and
answeredAt. A page without a session shows a sign-in form. A port in use is exit 4.`,
  'paused-states': `usage: runner paused-states list [--all | --conversation C] [--limit N] [--json]
       runner paused-states get TOKEN [--json]
       runner paused-states purge --older-than AGE [--dry-run] [--json]

list    pending questions of all conversations (or of conversation C), first to answer
        first, with their priority as the page says it (urgent from 5, high from 1); --all shows the most recent questions, answered ones too, with the answer
        (accept, decline or cancel) and who gave it (default limit 100, or 50 with --all)
get     one question by its token: pending, or answered (the answer, who, when); exit 3
        when no question has that token
purge   deletes answered questions and finished runs older than AGE (e.g. 30m, 12h, 7d);
        never a pending question, nor one of a conversation whose run may yet resume
        (waiting, ready, running, or failed: retry resumes it), which show still prints;
        --dry-run says what it would delete and deletes nothing`,
  operators: `usage: runner operators add NAME [--role ROLE]... [--json]
       runner operators list | revoke NAME | rotate NAME [--json]

The operators who sign in to \`runner serve\` with an API key. add prints the new key once:
only its SHA-256 is kept, so a lost key is replaced with rotate, which prints a new one
and stops the old one at once. revoke stops an operator's key for good (the name is kept,
and not reused). list shows names, roles and when each key was made, never a key.

--role ROLE   one of admin (everything, manages operators), operator (answers what each
              question's audience allows; the default) or viewer (reads), and any number
              of audience roles (finance, ...) that RUNNER_AUDIENCE names.
Exit 3 for an unknown or revoked NAME, 5 for a name used before. Operators are managed
here, by whoever holds the data folder or DATABASE_URL: an administrator's tool.`,
  policy: `usage: runner policy test DIR|FILE... [--policy PATH] [--json]
       runner policy explain TOKEN [--json]
       runner policy replay FILE|DIR [--since 30d] [--json]
       runner policy load FILE|DIR... [--json]
       runner policy versions [--json]
       runner policy shadow [--since 7d] [--json]

Decides each case of the fixture files (a folder's *.json, in name order) with the active
policies (RUNNER_POLICY's Cedar files and the question variables), or with PATH's Cedar
files over the same tools, and prints every case whose decision differs from what it
expects, and a summary. A file:
  {"version": 1, "cases": [{"name": "a small payment needs nobody",
    "call": {"tool": "transfer_funds",
             "input": {"amount": 20, "to": "acme", "currency": "EUR"}},
    "requester": {"name": "ada", "roles": ["staff"]},         (optional; default nobody)
    "time": "2026-01-05T10:00:00Z", "counters": {"questions": 0},      (optional)
    "expect": {"outcome": "allow", "ruleIds": ["small"],      (allow, deny or ask;
               "audience": {"roles": ["finance"]}, "quorum": 2}}]}   the rest optional)
Exit 0 every case passed · 1 some failed · 2 a fixture or policy file is refused (its
file and what is wrong).

explain  how the policies decided to ask question TOKEN: the outcome, the reason, the
         call (tool, tool call, run, a digest of its arguments), the set's hash, and the
         matching rules with what each sets (audience, quorum, deadline, ...) when that set
         is the active one or a version policy load recorded (which it names). Exit 3 when
         no policy decision asked TOKEN.

replay   decides every call and question recorded in the last --since (default 30d)
         again with FILE's (or DIR's) Cedar policies over the same tools, and prints
         "would allow N of M asked calls; people declined K of those N", the changed
         outcomes, the decisions not replayable (recorded before their arguments were
         kept) and how long it took. Exit 2 when FILE is not valid Cedar.

load     validates the Cedar files as RUNNER_POLICY's are and records them as the newest
         policy version (its hash, who loaded it, when, the files' text; in the audit
         chain policy): running workers decide with it from their next decision, with no
         restart; a question keeps the version that asked it. Exit 2 for a bad file (its
         line and Cedar's message): nothing is recorded.

versions the versions load recorded, newest first (at most 100): number, hash, who loaded
         it, when, its files; * marks the newest, the one running workers decide with.
         None loaded: workers decide with RUNNER_POLICY and the question variables.

shadow   the decisions of the last --since (default 7d) on which RUNNER_POLICY_SHADOW's
         candidate policies disagreed with the active ones (another outcome, or an error
         deciding), each with what the active set decided, what the candidate would have,
         and what people answered.`,
  audit: `usage: runner audit [--conversation C] [--since TIME | AGE] [--json]
       runner audit verify [--json]
       runner audit head [--json]

(list)  the audit log's entries, oldest first: questions created (run, tool call, a digest
        of its arguments), answered (who, through which channel: cli, api or page, the
        answer), refused (already answered, forbidden, after the deadline), expired (nobody
        answered before the deadline: its default applied), cancelled (stop), purged, and the
        seals of the conversations' chains; --conversation C only C's chain; --since an ISO
        time or an age like 7d; --json one entry per line (an export)
verify  checks every entry's hash, its HMAC under the audit key and its place in its chain,
        and that every answered question still says what its entry recorded; names the
        first bad entry of each chain. Exit 0 verified · 1 tampering found (the entries are
        listed) · 2 no audit key (it says how to set one) · 4 the data folder's audit.key is
        gone while its log has entries (restore it: the data folder cannot be used without it)
head    the global chain's latest hash, which the wake loop advances when it seals the
        conversations' chains (at most every 10 s, and when it stops): copy it elsewhere to
        anchor the whole log

The key: RUNNER_AUDIT_KEY_FILE or RUNNER_AUDIT_KEY; on the embedded default, without either,
the data folder's audit.key (mode 0600, made on first use, beside the database, not in it).
On PostgreSQL without a key nothing is recorded.`,
  notifications: `usage: runner notifications list [--status pending|delivered|failed] [--limit N] [--json]
       runner notifications retry ID [--json]

list    the notifications of events (question.created, .reminded, .escalated, .answered,
        .expired, .cancelled, run.completed, run.failed), newest first (default limit 100):
        pending (with its attempts and why the last failed), delivered, or failed: given
        up after RUNNER_NOTIFY_MAX_ATTEMPTS, the dead letter
retry   makes notification ID due again, its attempts counted from zero; wake or serve
        sends it with the same webhook-id (the event id), so a receiver drops a duplicate.
        Exit 3 for an unknown ID, 5 for one that is pending already

Which events go where is RUNNER_NOTIFY; a notification is written in the transaction of
its event (a question rolled back sends nothing) and delivered at least once by wake and
serve, with backoff and jitter (RUNNER_NOTIFY_BACKOFF_MS); a claimed one is sent again
when its lease (RUNNER_NOTIFY_LEASE_MS, default 60 s) runs out first. A webhook
(RUNNER_WEBHOOK_URL) is signed by the Standard Webhooks scheme with RUNNER_WEBHOOK_SECRET;
email goes through RUNNER_SMTP_URL to RUNNER_EMAIL_TO, with signed one-time decision links
to serve's /decide when RUNNER_DECISION_KEY and RUNNER_PUBLIC_URL are set (for recipients
in the question's audience); Slack by RUNNER_SLACK_TOKEN to RUNNER_SLACK_CHANNEL, its
buttons answered at serve's /slack/interactions, its message updated when the question
ends.`,
  migrate: `usage: runner migrate [--data DIR]

Applies the database migrations of every package (idempotent). Other commands also apply
them on first use.`,
};

/** What `runner help TOPIC` prints for a topic that is not a command. */
export const HELP_TOPICS: Record<string, string> = {
  environment: `runner help environment — the environment variables the runner reads

Unset or empty is the default; a value a variable does not take is refused before the
command starts (exit 2), naming it and what it takes.

${describeVariables()}

real models: anthropic:MODEL needs ANTHROPIC_API_KEY; openai:MODEL needs OPENAI_API_KEY, or
OPENAI_BASE_URL for a local OpenAI-compatible server, which takes no key.

storage: the embedded default keeps PGlite and files in the data folder (one process at a
time). Set DATABASE_URL=postgres://USER@HOST:PORT/DATABASE to keep everything in
PostgreSQL instead, where many runner processes can work at once. The URL must name a
database; a command gives up on a server it cannot reach after ?connect_timeout=SECONDS
(or PGCONNECT_TIMEOUT; default 10), and names what answered when it is not PostgreSQL.

telemetry: serve serves Prometheus metrics at /metrics (admins), and serve and wake on
--metrics-port; --log-format json logs one pino object per line; traces go over OTLP/HTTP
when the standard OTEL_* variables ask (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, ...;
off by default, and then nothing of OpenTelemetry is loaded).`,
  'exit-codes': `runner help exit-codes — what the runner's exit codes mean

0 done (completed, waiting, or answered) · 1 failed · 2 bad usage or input ·
3 no such pending question, run, conversation or session · 4 unavailable (the database
server cannot be reached or refuses, the data folder cannot be used or is in use, serve's
port is in use) · 5 conflict (someone else changed it first: the question was answered
already, retry of a run that is not failed, or exec meets a conversation with open work
and no --replace) · 6 forbidden (an operator's roles or the question's audience do not allow
it) · 7 expired (the answer came after the question's deadline; its default is applied).
The approval center's API answers 400, 404, 503, 409, 403 and 410 for the same.
With --json an error is one JSON object on stderr: {"type":"error","message","failure",
"exitCode"}.`,
};
