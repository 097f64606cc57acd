CREATE TABLE "x_executive"."gated_results" (
	"token" text PRIMARY KEY NOT NULL,
	"tool" text NOT NULL,
	"arguments" jsonb NOT NULL,
	"edited" boolean NOT NULL,
	"result" text NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL
);
