-- Wake-ups for listeners (LISTEN askuser_created / askuser_answered); the payload is the
-- pause token. NOTIFY is delivered on commit, so a listener never sees a rolled-back row.
CREATE FUNCTION "aura"."paused_states_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM pg_notify('askuser_created', NEW.token);
  ELSIF OLD.resumed_at IS NULL AND NEW.resumed_at IS NOT NULL THEN
    PERFORM pg_notify('askuser_answered', NEW.token);
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "paused_states_notify_created" AFTER INSERT ON "aura"."paused_states"
  FOR EACH ROW EXECUTE FUNCTION "aura"."paused_states_notify"();
--> statement-breakpoint
CREATE TRIGGER "paused_states_notify_answered" AFTER UPDATE OF "resumed_at" ON "aura"."paused_states"
  FOR EACH ROW EXECUTE FUNCTION "aura"."paused_states_notify"();
