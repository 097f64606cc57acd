-- The used decision links and the Slack messages are @x/notify's now (x_notify.*, its migration 0000, applied before this one).
INSERT INTO "x_notify"."decision_links" ("id", "token", "used_at")
SELECT "id", "token", "used_at" FROM "runner"."decision_links" ORDER BY "used_at", "id"
ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO "x_notify"."slack_messages" ("token", "channel", "ts", "posted_at")
SELECT "token", "channel", "ts", "posted_at" FROM "runner"."slack_messages" ORDER BY "posted_at", "token"
ON CONFLICT DO NOTHING;
--> statement-breakpoint
DROP TABLE "runner"."decision_links";
--> statement-breakpoint
DROP TABLE "runner"."slack_messages";
