-- Outbound webhooks (spec §6): subscriptions are disabled by default (runtime status
-- planned_not_generally_available) and activated one by one; every event goes through an outbox.
-- The sandbox keeps the signing secret in plain text: it is a local test sandbox, never a deployment.

CREATE TABLE webhook_subscriptions (
  subscription_id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations,
  receiver_url    text NOT NULL,
  signing_secret  text NOT NULL CHECK (length(signing_secret) > 0),
  active          boolean NOT NULL DEFAULT false,
  -- Retry settings (§6.4: schedule and maximum not shown; these are the sandbox's choices).
  max_attempts    integer NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 20),
  backoff_ms      integer NOT NULL DEFAULT 1000 CHECK (backoff_ms BETWEEN 0 AND 3600000),
  timeout_ms      integer NOT NULL DEFAULT 10000 CHECK (timeout_ms BETWEEN 50 AND 60000),
  -- Fault switchboard: the mutant named by the activating request, applied by the delivery worker.
  mutant          text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_subscriptions_org_idx ON webhook_subscriptions (organization_id) WHERE active;

-- One row per event and subscription: the delivery id is stable across retries (§6.2).
CREATE TABLE webhook_outbox (
  delivery_id     text PRIMARY KEY,
  event_id        text NOT NULL,
  subscription_id text NOT NULL REFERENCES webhook_subscriptions,
  payload         jsonb NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivering', 'delivered', 'failed', 'cancelled')),
  last_result     text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, subscription_id)
);
CREATE INDEX webhook_outbox_due_idx ON webhook_outbox (next_attempt_at) WHERE status = 'pending';
