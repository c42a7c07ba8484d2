-- Passkeys and signing links (migration 0016): a person's registered WebAuthn credentials,
-- and where a person can sign an approval. Named blocks, loaded once with every .sql file
-- here by taskqueue/store/queries.py; the TaskQueue method has the query's name
-- (taskqueue/store/passkeys.py).

-- name: passkey_add
INSERT INTO passkeys (credential_id, person, person_key, public_key, sign_count, rp_id, label)
VALUES (%(credential_id)s, %(person)s, %(person_key)s, %(public_key)s, %(sign_count)s,
        %(rp_id)s, %(label)s)
ON CONFLICT (credential_id) DO NOTHING
RETURNING *;

-- name: passkey_list
SELECT * FROM passkeys WHERE person_key = %(person_key)s ORDER BY created_at, credential_id;

-- name: passkey_get
SELECT * FROM passkeys WHERE credential_id = %(credential_id)s;

-- name: passkey_remove
DELETE FROM passkeys WHERE person_key = %(person_key)s AND credential_id = %(credential_id)s
RETURNING credential_id;

-- name: passkey_used
UPDATE passkeys SET sign_count = GREATEST(sign_count, %(sign_count)s), last_used_at = now()
WHERE credential_id = %(credential_id)s;

-- name: signing_link_set
INSERT INTO signing_links (name, url) VALUES (%(name)s, %(url)s)
ON CONFLICT (name) DO UPDATE SET url = EXCLUDED.url, updated_at = now()
WHERE signing_links.url IS DISTINCT FROM EXCLUDED.url;

-- name: signing_link_get
SELECT url FROM signing_links ORDER BY updated_at DESC LIMIT 1;

-- name: approval_signatures
-- The counted approves of an approval with the assertion each was confirmed with and the
-- stored credential it names (for that same person): what the gate verifies again.
SELECT v.person, v.person_key, v.credential_id, v.authenticator_data, v.client_data,
       v.signature, v.origin, p.public_key, p.rp_id
FROM approval_votes v
LEFT JOIN passkeys p ON p.credential_id = v.credential_id AND p.person_key = v.person_key
WHERE v.approval_id = %(approval_id)s AND v.counts
ORDER BY v.decided_at, v.person;
