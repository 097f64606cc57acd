-- Issue 53: a write that waited for another write's lock on a run read the run as the other
-- left it, but looked for its queue row in the snapshot its statement took before, where the
-- row still had the old time; it missed the row, which stayed apart from its run for ever.
-- A write now moves the queue row through this function: in READ COMMITTED each of its
-- statements takes a fresh snapshot, which, with the run locked, sees the row as the run's
-- last writer left it. It finds the row by the time it read from the run (`was`) and brings it
-- to `claimable_at` with the lease, deletes it (no new time) or adds it (no old time).
-- It returns whether a row was written.
CREATE FUNCTION "x_continuation"."sync_run_queue"("p_run_id" text, "p_was" timestamptz, "p_claimable_at" timestamptz, "p_leased" boolean, "p_lease_holder" integer)
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	IF p_was IS NOT NULL AND p_claimable_at IS NOT NULL THEN
		UPDATE "x_continuation"."run_queue" SET "claimable_at" = p_claimable_at, "leased" = p_leased, "lease_holder" = p_lease_holder
		WHERE "run_id" = p_run_id AND "claimable_at" = p_was;
		-- A row that drifted before (written outside these statements) is added again: the run is claimable.
		IF NOT FOUND THEN
			INSERT INTO "x_continuation"."run_queue" ("run_id", "claimable_at", "leased", "lease_holder")
			VALUES (p_run_id, p_claimable_at, p_leased, p_lease_holder);
		END IF;
	ELSIF p_was IS NOT NULL THEN
		DELETE FROM "x_continuation"."run_queue" WHERE "run_id" = p_run_id AND "claimable_at" = p_was;
	ELSIF p_claimable_at IS NOT NULL THEN
		INSERT INTO "x_continuation"."run_queue" ("run_id", "claimable_at", "leased", "lease_holder")
		VALUES (p_run_id, p_claimable_at, p_leased, p_lease_holder);
	END IF;
	RETURN FOUND;
END
$$;
--> statement-breakpoint
-- Where the queue and its runs disagree: each run whose claimable_at has not exactly one queue
-- row, at that time, with its lease, and each queue row of no run at its time. Empty while
-- every write goes through the queue's statements (PostgresRunQueue.queueDrift reads it).
CREATE VIEW "x_continuation"."run_queue_drift" AS
SELECT coalesce(e."run_id", q."run_id") AS "run_id", e."claimable_at", q."queued_at"
FROM (
	SELECT "run_id", "claimable_at", "status" = 'running' AS "leased", CASE WHEN "status" = 'running' THEN "lease_holder" END AS "lease_holder"
	FROM "x_continuation"."runs" WHERE "claimable_at" IS NOT NULL
) e FULL JOIN (
	SELECT "run_id", array_agg("claimable_at" ORDER BY "claimable_at") AS "queued_at", count(*) AS "n", bool_and("leased") AS "leased", min("lease_holder") AS "lease_holder"
	FROM "x_continuation"."run_queue" GROUP BY "run_id"
) q ON q."run_id" = e."run_id"
WHERE e."run_id" IS NULL OR q."run_id" IS NULL OR q."n" <> 1 OR q."queued_at"[1] <> e."claimable_at"
	OR q."leased" <> e."leased" OR q."lease_holder" IS DISTINCT FROM e."lease_holder";
--> statement-breakpoint
-- Repair a queue that drifted before this migration: run_queue holds nothing but each
-- claimable run's time and lease, so it is rebuilt from runs, none of either written meanwhile.
-- The statement's row says how many runs were repaired (its steps share one snapshot: the
-- delete sees none of the rows the insert adds).
LOCK TABLE "x_continuation"."runs", "x_continuation"."run_queue" IN SHARE ROW EXCLUSIVE MODE;
--> statement-breakpoint
WITH "drifted" AS (
	SELECT count(*)::int AS "repaired_runs" FROM "x_continuation"."run_queue_drift"
), "cleared" AS (
	DELETE FROM "x_continuation"."run_queue"
), "rebuilt" AS (
	INSERT INTO "x_continuation"."run_queue" ("run_id", "claimable_at", "leased", "lease_holder")
	SELECT "run_id", "claimable_at", "status" = 'running', CASE WHEN "status" = 'running' THEN "lease_holder" END
	FROM "x_continuation"."runs" WHERE "claimable_at" IS NOT NULL
)
SELECT "repaired_runs" FROM "drifted";
