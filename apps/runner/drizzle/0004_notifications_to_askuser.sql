-- The outbox is @x/askuser's now (aura.notifications, its migration 0007, applied before this one).
INSERT INTO "aura"."notifications" ("id", "event_id", "kind", "channel", "payload", "status", "attempts", "next_at", "last_error", "created_at", "delivered_at")
SELECT "id", "event_id", "kind", "channel", "payload", "status", "attempts", "next_at", "last_error", "created_at", "delivered_at"
FROM "runner"."notifications" ORDER BY "created_at", "id"
ON CONFLICT DO NOTHING;
--> statement-breakpoint
DROP TABLE "runner"."notifications";
