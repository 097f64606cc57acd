-- An audit append writes less. The heads table keeps room on each page, so that a head's
-- update (seq and hash, no indexed column) stays a HOT update, with no new index entry.
ALTER TABLE "aura"."audit_heads" SET (fillfactor = 50);
--> statement-breakpoint
-- Entries are appended in time order: a BRIN index finds a time range (an export since a
-- time, a purge before one) at almost no cost per append, where a btree took an insert each.
DROP INDEX IF EXISTS "aura"."audit_entries_at_idx";
--> statement-breakpoint
CREATE INDEX "audit_entries_at_idx" ON "aura"."audit_entries" USING brin ("at");
--> statement-breakpoint
-- The range being appended to is left unsummarized (scans read it whole), so that appends
-- never rewrite its summary; VACUUM summarizes each range once it is full.
SELECT brin_desummarize_range('"aura"."audit_entries_at_idx"'::regclass,
  pg_relation_size('"aura"."audit_entries"'::regclass) / current_setting('block_size')::bigint);
