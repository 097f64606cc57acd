CREATE SCHEMA "aura";
--> statement-breakpoint
CREATE TABLE "aura"."paused_states" (
	"token" text PRIMARY KEY NOT NULL,
	"conversation_id" text NOT NULL,
	"kind" text NOT NULL,
	"question" text NOT NULL,
	"options" jsonb,
	"priority" integer DEFAULT 0 NOT NULL,
	"tool_call_id" text NOT NULL,
	"resume_context" jsonb,
	"proxied_from_child_id" text,
	"proxied_tool_call_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"resumed_at" timestamp with time zone,
	"resumed_answer" jsonb
);
--> statement-breakpoint
CREATE INDEX "paused_states_pending_conversation_fifo_idx" ON "aura"."paused_states" USING btree ("conversation_id","priority" DESC NULLS FIRST,"created_at","token") WHERE "aura"."paused_states"."resumed_at" is null;--> statement-breakpoint
CREATE INDEX "paused_states_pending_fifo_idx" ON "aura"."paused_states" USING btree ("priority" DESC NULLS FIRST,"created_at","token") WHERE "aura"."paused_states"."resumed_at" is null;--> statement-breakpoint
CREATE INDEX "paused_states_created_idx" ON "aura"."paused_states" USING btree ("created_at","token");--> statement-breakpoint
CREATE INDEX "paused_states_answered_idx" ON "aura"."paused_states" USING btree ("resumed_at","token") WHERE "aura"."paused_states"."resumed_at" is not null;--> statement-breakpoint
CREATE INDEX "paused_states_answered_conversation_idx" ON "aura"."paused_states" USING btree ("conversation_id","resumed_at","token") WHERE "aura"."paused_states"."resumed_at" is not null;