-- Where in its run's transcript a decided call stands, so that a turn run again after a crash
-- finds the decision (and the allowed call's result) of the same call; null on older rows.
ALTER TABLE "x_executive"."policy_decisions" ADD COLUMN "position" integer;
