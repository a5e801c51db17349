-- The list route counts the listable encounters of one organization on every page (organization_id = $1 AND NOT
-- is_demo, for `total`). Without date bounds that count read the whole table with a sequential scan (100,000
-- encounters in one organization: ~30 ms of a ~45 ms deep page). This partial index on exactly that predicate is
-- tiny (B-tree deduplication stores one organization id per posting list), so the count becomes an index-only scan
-- over a few dozen pages. Paging itself keeps using encounters_org_created_idx of 001.
CREATE INDEX encounters_org_listable_idx ON encounters (organization_id) WHERE NOT is_demo;
