-- Where each question's Slack message was posted, so that an answer given anywhere updates it (chat.update).
CREATE TABLE "runner"."slack_messages" (
	"token" text PRIMARY KEY NOT NULL,
	"channel" text NOT NULL,
	"ts" text NOT NULL,
	"posted_at" timestamp with time zone DEFAULT now() NOT NULL
);
