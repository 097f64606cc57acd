CREATE TABLE "aura"."notifications" (
	"id" text PRIMARY KEY NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
	"event_id" text NOT NULL,
	"kind" text NOT NULL,
	"channel" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone,
	CONSTRAINT "notifications_event_channel_unique" UNIQUE("event_id","channel"),
	CONSTRAINT "notifications_status_check" CHECK ("status" in ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
CREATE INDEX "notifications_due_idx" ON "aura"."notifications" ("next_at") WHERE "status" = 'pending';
--> statement-breakpoint
CREATE INDEX "notifications_seq_idx" ON "aura"."notifications" ("seq");
--> statement-breakpoint
CREATE INDEX "notifications_status_seq_idx" ON "aura"."notifications" ("status", "seq");
