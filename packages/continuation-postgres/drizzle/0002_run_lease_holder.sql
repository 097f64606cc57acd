ALTER TABLE "x_continuation"."runs" ADD COLUMN "lost_attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "x_continuation"."runs" ADD COLUMN "lease_holder" integer;