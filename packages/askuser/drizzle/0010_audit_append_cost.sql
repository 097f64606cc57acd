-- A single audit append moves its chain's head in its own statement and marks its entry with
-- aura.audit_append = '<chain>:<seq>' (transaction-local); the trigger stays for other writers
-- (several entries at once, direct SQL, an older release) and skips an entry so marked.
DROP TRIGGER "audit_entries_advance_head" ON "aura"."audit_entries";
--> statement-breakpoint
CREATE TRIGGER "audit_entries_advance_head" AFTER INSERT ON "aura"."audit_entries"
  FOR EACH ROW
  WHEN (current_setting('aura.audit_append', true) IS DISTINCT FROM NEW.chain || ':' || NEW.seq)
  EXECUTE FUNCTION "aura"."audit_entries_advance_head"();
