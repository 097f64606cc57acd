CREATE TABLE "x_continuation"."runs" (
	"run_id" text PRIMARY KEY NOT NULL,
	"conversation_id" text NOT NULL,
	"status" text NOT NULL,
	"interaction_id" text,
	"input" jsonb,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"lease_owner" text,
	"due_at" timestamp with time zone,
	"meta" jsonb,
	"transcript" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "runs_status_check" CHECK ("x_continuation"."runs"."status" in ('running', 'waiting', 'ready', 'completed', 'cancelled', 'failed'))
);
--> statement-breakpoint
CREATE INDEX "runs_claimable_idx" ON "x_continuation"."runs" USING btree ("due_at","run_id") WHERE "x_continuation"."runs"."status" in ('ready', 'running');--> statement-breakpoint
CREATE UNIQUE INDEX "runs_interaction_idx" ON "x_continuation"."runs" USING btree ("interaction_id");--> statement-breakpoint
CREATE INDEX "runs_conversation_idx" ON "x_continuation"."runs" USING btree ("conversation_id","created_at");--> statement-breakpoint
CREATE INDEX "runs_status_idx" ON "x_continuation"."runs" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "runs_created_idx" ON "x_continuation"."runs" USING btree ("created_at");