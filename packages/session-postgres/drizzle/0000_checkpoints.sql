-- CREATE SCHEMA "x_session" removed: migrate() creates it first, for its migrations table.
CREATE TABLE "x_session"."checkpoints" (
	"thread_id" text PRIMARY KEY NOT NULL,
	"revision" integer NOT NULL,
	"version" integer,
	"checkpoint" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
