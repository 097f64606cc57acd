-- IF NOT EXISTS: migrate() creates the schema first, to hold its own migrations table.
CREATE SCHEMA IF NOT EXISTS "x_continuation";
--> statement-breakpoint
CREATE TABLE "x_continuation"."suspensions" (
	"interaction_id" text PRIMARY KEY NOT NULL,
	"session_id" text,
	"run_id" text,
	"record" text NOT NULL,
	"resolved" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "suspensions_unresolved_created_idx" ON "x_continuation"."suspensions" USING btree ("created_at") WHERE "x_continuation"."suspensions"."resolved" = false;--> statement-breakpoint
CREATE INDEX "suspensions_unresolved_session_idx" ON "x_continuation"."suspensions" USING btree ("session_id","created_at") WHERE "x_continuation"."suspensions"."resolved" = false;--> statement-breakpoint
CREATE INDEX "suspensions_unresolved_run_idx" ON "x_continuation"."suspensions" USING btree ("run_id","created_at") WHERE "x_continuation"."suspensions"."resolved" = false;