-- Schema of the reference implementation. Identifiers are opaque text; timestamps are timestamptz.

CREATE TABLE organizations (
  organization_id          text PRIMARY KEY,
  name                     text NOT NULL,
  allowlisted              boolean NOT NULL,
  encounter_routes_enabled boolean NOT NULL,
  document_routes_enabled  boolean NOT NULL
);

-- Only an HMAC-SHA256 digest of the whole token is stored (digest key held by the server, not the database).
-- key_id is the lookup id embedded in the token. organization_id NULL = the key is not organization scoped.
CREATE TABLE api_keys (
  key_id          text PRIMARY KEY,
  label           text NOT NULL,
  key_digest      bytea NOT NULL CHECK (octet_length(key_digest) = 32),
  organization_id text REFERENCES organizations,
  scopes          text[] NOT NULL,
  is_test         boolean NOT NULL,
  disabled_at     timestamptz,
  revoked_at      timestamptz,
  expires_at      timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE patients (
  patient_id      text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations,
  first_name      text,
  last_name       text,
  date_of_birth   date
);

CREATE TABLE encounters (
  encounter_id    text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations,
  patient_id      text REFERENCES patients,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  date_of_service timestamptz,
  encounter_type  text CHECK (encounter_type IN ('ambient', 'phone_call', 'clinical_documentation', 'billing', 'checklist')),
  status          text,
  is_demo         boolean NOT NULL DEFAULT false -- demo or training data: never disclosed
);
-- Serves WHERE organization_id = $1 ORDER BY created_at, encounter_id in both directions (backward scan for desc).
CREATE INDEX encounters_org_created_idx ON encounters (organization_id, created_at, encounter_id);

CREATE TABLE documents (
  document_id            text PRIMARY KEY,
  encounter_id           text NOT NULL REFERENCES encounters,
  position               integer NOT NULL,
  schema_type            text NOT NULL CHECK (schema_type IN ('document', 'ambient_transcript', 'billing', 'encounter_checklist')),
  title                  text,
  status                 text,
  workflow_variant       text CHECK (workflow_variant IN ('ambient', 'phone_call')),
  audio_duration_seconds double precision,
  content_text           text,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL
);
CREATE INDEX documents_encounter_idx ON documents (encounter_id, position, document_id);

CREATE TABLE transcripts (
  document_id            text PRIMARY KEY REFERENCES documents,
  provider               text NOT NULL,
  audio_duration_seconds double precision,
  finalized              boolean NOT NULL,
  turns                  jsonb NOT NULL -- [{speaker, text, start, end}], stored in any order
);

CREATE TABLE recordings (
  recording_id text PRIMARY KEY,
  document_id  text NOT NULL UNIQUE REFERENCES documents,
  has_audio    boolean NOT NULL,
  storage_key  text
);

-- The "object storage" of the sandbox.
CREATE TABLE audio_objects (
  storage_key  text PRIMARY KEY,
  content_type text NOT NULL DEFAULT 'audio/mpeg',
  bytes        bytea NOT NULL
);

-- One row per successful read on /external/v1.
CREATE TABLE disclosure_events (
  event_id        bigserial PRIMARY KEY,
  route           text NOT NULL,
  organization_id text NOT NULL,
  key_id          text NOT NULL,
  resource_ids    text[] NOT NULL,
  at              timestamptz NOT NULL DEFAULT now()
);
