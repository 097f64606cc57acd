-- Each used decision link, by its id: inserted in the answer's transaction, so a link answers once.
CREATE TABLE "x_notify"."decision_links" (
	"id" text PRIMARY KEY NOT NULL,
	"token" text NOT NULL,
	"used_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- Where each question's Slack message was posted, so that an answer given anywhere updates it (chat.update).
CREATE TABLE "x_notify"."slack_messages" (
	"token" text PRIMARY KEY NOT NULL,
	"channel" text NOT NULL,
	"ts" text NOT NULL,
	"posted_at" timestamp with time zone DEFAULT now() NOT NULL
);
