-- A subscription keeps the key of the hook its activating request ran with (opaque to the service; the delivery
-- worker asks the hook it names for the sender's rules), no longer a name the service itself would read.
ALTER TABLE webhook_subscriptions RENAME COLUMN mutant TO hook_key;
