ALTER TABLE "aura"."paused_states" ADD COLUMN "deadline_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "deadline_answer" jsonb;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "expired_at" timestamp with time zone;