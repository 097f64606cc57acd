CREATE TABLE "x_executive"."policy_decisions" (
	"id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"tool" text NOT NULL,
	"tool_call_id" text NOT NULL,
	"arguments_digest" text NOT NULL,
	"outcome" text NOT NULL,
	"reason" text NOT NULL,
	"rule_ids" jsonb NOT NULL,
	"policy_hash" text NOT NULL,
	"error" text,
	"token" text,
	"decided_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "policy_decisions_run_idx" ON "x_executive"."policy_decisions" ("run_id");
--> statement-breakpoint
CREATE INDEX "policy_decisions_call_idx" ON "x_executive"."policy_decisions" ("conversation_id", "tool", "arguments_digest", "decided_at");
--> statement-breakpoint
CREATE TABLE "x_executive"."policy_grants" (
	"run_id" text NOT NULL,
	"idx" integer NOT NULL,
	"tool" text NOT NULL,
	"arguments" jsonb,
	"granted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "policy_grants_pk" PRIMARY KEY ("run_id", "idx")
);
