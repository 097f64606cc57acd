-- A run's steps write less (issue 33). runs is rewritten so that an answer, a claim and a run's
-- end are HOT updates: no index covers a column they change, each page keeps room for a new
-- version, and the columns that never change come first (an update's WAL record then holds
-- little more than what changed). The claim order moves to run_queue, a row per run with a
-- claimable_at. Every run is copied as it is: waiting, ready and running runs are claimable as
-- before. due_at is now claimable_at, so that a process of the previous version fails each
-- statement on the queue loudly (column "due_at" does not exist) instead of readying a run that
-- no claim would find; its running runs are taken over when their leases expire. Rewriting the
-- table keeps no GRANT made on it: grant again after migrating.
CREATE TABLE "x_continuation"."runs_next" (
	"run_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"meta" jsonb,
	"interaction_id" text,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"lost_attempts" integer DEFAULT 0 NOT NULL,
	"lease_holder" integer,
	"claimable_at" timestamp with time zone,
	"deadline_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"failed_at" timestamp with time zone,
	"transcript" text,
	"last_error" text,
	"lease_owner" text,
	"input" jsonb,
	CONSTRAINT "runs_next_pkey" PRIMARY KEY ("run_id"),
	CONSTRAINT "runs_next_status_check" CHECK ("status" in ('running', 'waiting', 'ready', 'completed', 'cancelled', 'failed'))
) WITH (fillfactor = 70);
--> statement-breakpoint
INSERT INTO "x_continuation"."runs_next" ("run_id", "conversation_id", "created_at", "meta", "interaction_id", "status", "attempts", "lost_attempts", "lease_holder", "claimable_at", "deadline_at", "updated_at", "finished_at", "failed_at", "transcript", "last_error", "lease_owner", "input")
SELECT "run_id", "conversation_id", "created_at", "meta", "interaction_id", "status", "attempts", "lost_attempts", "lease_holder",
	CASE WHEN "status" IN ('ready', 'running', 'waiting') THEN "due_at" END, "deadline_at", "updated_at", "finished_at",
	CASE WHEN "status" = 'failed' THEN coalesce("finished_at", "updated_at") END, "transcript", "last_error", "lease_owner", "input"
FROM "x_continuation"."runs";
--> statement-breakpoint
DROP TABLE "x_continuation"."runs";
--> statement-breakpoint
ALTER TABLE "x_continuation"."runs_next" RENAME TO "runs";
--> statement-breakpoint
ALTER TABLE "x_continuation"."runs" RENAME CONSTRAINT "runs_next_pkey" TO "runs_pkey";
--> statement-breakpoint
ALTER TABLE "x_continuation"."runs" RENAME CONSTRAINT "runs_next_status_check" TO "runs_status_check";
--> statement-breakpoint
CREATE INDEX "runs_interaction_idx" ON "x_continuation"."runs" USING btree ("interaction_id");
--> statement-breakpoint
CREATE INDEX "runs_conversation_idx" ON "x_continuation"."runs" USING btree ("conversation_id","created_at");
--> statement-breakpoint
CREATE INDEX "runs_created_idx" ON "x_continuation"."runs" USING btree ("created_at");
--> statement-breakpoint
CREATE INDEX "runs_failed_idx" ON "x_continuation"."runs" USING btree ("created_at") WHERE "x_continuation"."runs"."failed_at" is not null;
--> statement-breakpoint
-- No key: a statement finds a run's row by the time it read from the run it holds locked. With
-- REPLICA IDENTITY FULL a logical replication publication can carry its updates and deletes
-- (it costs nothing below wal_level logical).
CREATE TABLE "x_continuation"."run_queue" (
	"run_id" text NOT NULL,
	"claimable_at" timestamp with time zone NOT NULL,
	"leased" boolean NOT NULL,
	"lease_holder" integer
);
--> statement-breakpoint
ALTER TABLE "x_continuation"."run_queue" REPLICA IDENTITY FULL;
--> statement-breakpoint
INSERT INTO "x_continuation"."run_queue" ("run_id", "claimable_at", "leased", "lease_holder")
SELECT "run_id", "claimable_at", "status" = 'running', CASE WHEN "status" = 'running' THEN "lease_holder" END
FROM "x_continuation"."runs" WHERE "claimable_at" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "run_queue_claimable_idx" ON "x_continuation"."run_queue" USING btree ("claimable_at");
