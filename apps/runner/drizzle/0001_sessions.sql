CREATE TABLE "runner"."sessions" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"access" text NOT NULL,
	"roles" text[] NOT NULL,
	"signed_in_with" text NOT NULL,
	"credential" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "sessions_expires_at_idx" ON "runner"."sessions" ("expires_at");
