-- aura.pending_audience mirrors the audience of every pending pause (key '*' when anyone
-- may answer), so listing what one identity may answer reads ordered index ranges.
CREATE FUNCTION "aura"."paused_states_audience"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.resumed_at IS NULL THEN
      INSERT INTO "aura"."pending_audience" ("audience_key", "priority", "created_at", "token")
      SELECT DISTINCT k, NEW.priority, NEW.created_at, NEW.token FROM unnest(
        CASE WHEN cardinality(NEW.audience_names) = 0 AND cardinality(NEW.audience_roles) = 0
          THEN ARRAY['*']
          ELSE ARRAY(SELECT 'name:' || n FROM unnest(NEW.audience_names) n)
            || ARRAY(SELECT 'role:' || r FROM unnest(NEW.audience_roles) r)
        END) k;
    END IF;
  ELSIF OLD.resumed_at IS NULL AND NEW.resumed_at IS NOT NULL THEN
    DELETE FROM "aura"."pending_audience" WHERE "token" = NEW.token;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "paused_states_audience_created" AFTER INSERT ON "aura"."paused_states"
  FOR EACH ROW EXECUTE FUNCTION "aura"."paused_states_audience"();
--> statement-breakpoint
CREATE TRIGGER "paused_states_audience_resolved" AFTER UPDATE OF "resumed_at" ON "aura"."paused_states"
  FOR EACH ROW EXECUTE FUNCTION "aura"."paused_states_audience"();
--> statement-breakpoint
INSERT INTO "aura"."pending_audience" ("audience_key", "priority", "created_at", "token")
  SELECT '*', "priority", "created_at", "token" FROM "aura"."paused_states" WHERE "resumed_at" IS NULL;
--> statement-breakpoint
-- Each appended audit entry moves its chain's head (locked by the appender beforehand).
CREATE FUNCTION "aura"."audit_entries_advance_head"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "aura"."audit_heads" SET "seq" = NEW.seq, "hash" = NEW.hash WHERE "chain" = NEW.chain;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "audit_entries_advance_head" AFTER INSERT ON "aura"."audit_entries"
  FOR EACH ROW EXECUTE FUNCTION "aura"."audit_entries_advance_head"();
