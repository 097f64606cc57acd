ALTER TABLE "x_langgraph"."checkpoints" ALTER COLUMN "checkpoint" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "x_langgraph"."checkpoints" ADD COLUMN "checkpoint_json" json;