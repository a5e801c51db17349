-- The list route counts and pages the listable encounters of one organization: organization_id = $1 AND NOT is_demo,
-- ordered by (created_at, encounter_id). A partial index on exactly that predicate lets PostgreSQL count them with an
-- index-only scan instead of a sequential scan of the whole table (100,000 encounters in one organization: the
-- sequential count took ~30 ms), and walk a deep offset without visiting demo rows. 001's index stays for the
-- mutants that drop the predicate.
CREATE INDEX encounters_org_listable_idx ON encounters (organization_id, created_at, encounter_id) WHERE NOT is_demo;
