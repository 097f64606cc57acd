CREATE TABLE "runner"."notifications" (
	"id" text PRIMARY KEY NOT NULL,
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
	CONSTRAINT "notifications_event_channel_unique" UNIQUE("event_id","channel")
);
--> statement-breakpoint
CREATE INDEX "notifications_due_idx" ON "runner"."notifications" ("next_at") WHERE "status" = 'pending';
--> statement-breakpoint
CREATE TABLE "runner"."decision_links" (
	"id" text PRIMARY KEY NOT NULL,
	"token" text NOT NULL,
	"used_at" timestamp with time zone DEFAULT now() NOT NULL
);
