-- A pause and its answer write less. A question anyone may answer gets no pending_audience row:
-- readers take "no audience" from this flag, kept by the server for every writer.
ALTER TABLE "aura"."paused_states" ADD COLUMN "has_audience" boolean
  GENERATED ALWAYS AS (cardinality("audience_names") > 0 OR cardinality("audience_roles") > 0) STORED;
--> statement-breakpoint
DELETE FROM "aura"."pending_audience" WHERE "audience_key" = '*';
--> statement-breakpoint
-- The pending FIFO leads with the flag, so the questions open to anyone are one ordered range.
DROP INDEX "aura"."paused_states_pending_fifo_idx";
--> statement-breakpoint
CREATE INDEX "paused_states_pending_fifo_idx" ON "aura"."paused_states" USING btree ("has_audience","priority" DESC NULLS FIRST,"created_at","token") WHERE "aura"."paused_states"."resumed_at" is null;
--> statement-breakpoint
-- One conversation's rows are few: its indexes need no token to break ties.
DROP INDEX "aura"."paused_states_pending_conversation_fifo_idx";
--> statement-breakpoint
CREATE INDEX "paused_states_pending_conversation_fifo_idx" ON "aura"."paused_states" USING btree ("conversation_id","priority" DESC NULLS FIRST,"created_at") WHERE "aura"."paused_states"."resumed_at" is null;
--> statement-breakpoint
DROP INDEX "aura"."paused_states_answered_conversation_idx";
--> statement-breakpoint
CREATE INDEX "paused_states_answered_conversation_idx" ON "aura"."paused_states" USING btree ("conversation_id","resumed_at") WHERE "aura"."paused_states"."resumed_at" is not null;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "aura"."paused_states_audience"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "aura"."pending_audience" ("audience_key", "priority", "created_at", "token")
    SELECT DISTINCT k, NEW.priority, NEW.created_at, NEW.token FROM unnest(
      ARRAY(SELECT 'name:' || n FROM unnest(NEW.audience_names) n)
        || ARRAY(SELECT 'role:' || r FROM unnest(NEW.audience_roles) r)) k;
  ELSE
    DELETE FROM "aura"."pending_audience" WHERE "token" = NEW.token;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
-- The store's insert and answer do the triggers' work in their own statement and mark it with
-- aura.pause_write = 'insert:<token>' / 'answer:<token>' (transaction-local); the triggers stay
-- for other writers (an older version, direct SQL) and skip a row so marked.
DROP TRIGGER "paused_states_notify_created" ON "aura"."paused_states";
--> statement-breakpoint
CREATE TRIGGER "paused_states_notify_created" AFTER INSERT ON "aura"."paused_states"
  FOR EACH ROW
  WHEN (current_setting('aura.pause_write', true) IS DISTINCT FROM 'insert:' || NEW.token)
  EXECUTE FUNCTION "aura"."paused_states_notify"();
--> statement-breakpoint
DROP TRIGGER "paused_states_notify_answered" ON "aura"."paused_states";
--> statement-breakpoint
CREATE TRIGGER "paused_states_notify_answered" AFTER UPDATE OF "resumed_at" ON "aura"."paused_states"
  FOR EACH ROW
  WHEN (OLD.resumed_at IS NULL AND NEW.resumed_at IS NOT NULL
    AND current_setting('aura.pause_write', true) IS DISTINCT FROM 'answer:' || NEW.token)
  EXECUTE FUNCTION "aura"."paused_states_notify"();
--> statement-breakpoint
DROP TRIGGER "paused_states_audience_created" ON "aura"."paused_states";
--> statement-breakpoint
CREATE TRIGGER "paused_states_audience_created" AFTER INSERT ON "aura"."paused_states"
  FOR EACH ROW
  WHEN (NEW.has_audience AND NEW.resumed_at IS NULL
    AND current_setting('aura.pause_write', true) IS DISTINCT FROM 'insert:' || NEW.token)
  EXECUTE FUNCTION "aura"."paused_states_audience"();
--> statement-breakpoint
DROP TRIGGER "paused_states_audience_resolved" ON "aura"."paused_states";
--> statement-breakpoint
CREATE TRIGGER "paused_states_audience_resolved" AFTER UPDATE OF "resumed_at" ON "aura"."paused_states"
  FOR EACH ROW
  WHEN ((OLD.has_audience OR NEW.has_audience) AND OLD.resumed_at IS NULL AND NEW.resumed_at IS NOT NULL
    AND current_setting('aura.pause_write', true) IS DISTINCT FROM 'answer:' || NEW.token)
  EXECUTE FUNCTION "aura"."paused_states_audience"();
