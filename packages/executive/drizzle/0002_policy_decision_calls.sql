-- Replay decides a recorded call again, so a decision keeps the call's arguments and requester;
-- rows recorded before this migration have neither and are reported as not replayable.
ALTER TABLE "x_executive"."policy_decisions" ADD COLUMN "arguments" jsonb;--> statement-breakpoint
ALTER TABLE "x_executive"."policy_decisions" ADD COLUMN "requester" text;--> statement-breakpoint
CREATE INDEX "policy_decisions_decided_idx" ON "x_executive"."policy_decisions" ("decided_at", "id");
