-- IF NOT EXISTS: migrate() creates the schema first for its own migrations table.
CREATE SCHEMA IF NOT EXISTS "x_session";
--> statement-breakpoint
CREATE TABLE "x_session"."checkpoints" (
	"thread_id" text PRIMARY KEY NOT NULL,
	"revision" integer NOT NULL,
	"version" integer,
	"checkpoint" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
