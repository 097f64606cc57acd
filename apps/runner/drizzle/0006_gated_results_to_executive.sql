-- The gated results are @x/executive's now (x_executive.gated_results, its migration 0000, applied before this one).
INSERT INTO "x_executive"."gated_results" ("token", "tool", "arguments", "edited", "result", "recorded_at")
SELECT "token", "tool", "arguments", "edited", "result", "recorded_at"
FROM "runner"."gated_results" ORDER BY "recorded_at", "token"
ON CONFLICT DO NOTHING;
--> statement-breakpoint
DROP TABLE "runner"."gated_results";
