CREATE SCHEMA IF NOT EXISTS "runner";
--> statement-breakpoint
CREATE TABLE "runner"."operators" (
	"name" text PRIMARY KEY NOT NULL,
	"roles" text[] NOT NULL,
	"key_id" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"key_created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "operators_key_id_unique" UNIQUE("key_id")
);
