-- A candidate (shadow) policy set's outcome beside each decision, recorded with no effect;
-- null where no candidate ran.
ALTER TABLE "x_executive"."policy_decisions" ADD COLUMN "shadow" jsonb;--> statement-breakpoint
CREATE TABLE "x_executive"."policy_versions" (
	"version" integer PRIMARY KEY NOT NULL,
	"policy_hash" text NOT NULL,
	"sources" jsonb NOT NULL,
	"loaded_by" text NOT NULL,
	"loaded_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "policy_versions_hash_idx" ON "x_executive"."policy_versions" ("policy_hash");
