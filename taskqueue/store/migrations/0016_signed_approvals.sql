-- Passkey-signed approvals (issue 39). A capability with signed_approvals counts an approve
-- only when the person confirmed it with their passkey: a WebAuthn assertion over a
-- challenge derived from the approval's id and the request's fingerprint
-- (taskqueue/store/signing.py), verified against the person's stored credential when the
-- approve is recorded and again by the gate right before it acts.
ALTER TABLE capabilities ADD COLUMN signed_approvals boolean NOT NULL DEFAULT false;

-- A person's registered passkeys: the credential's id and public key (COSE), the relying
-- party it was made for, and its signature counter. `person_key` is the folded name.
CREATE TABLE passkeys (
    credential_id bytea PRIMARY KEY CHECK (octet_length(credential_id) BETWEEN 1 AND 1023),
    person        text NOT NULL,
    person_key    text NOT NULL,
    public_key    bytea NOT NULL CHECK (octet_length(public_key) <= 4096),
    sign_count    bigint NOT NULL DEFAULT 0,
    rp_id         text NOT NULL,
    label         text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz
);
CREATE INDEX passkeys_person_idx ON passkeys (person_key);

-- The assertion an approve was confirmed with, stored with it (NULL: not signed).
ALTER TABLE approval_votes
    ADD COLUMN credential_id bytea,
    ADD COLUMN authenticator_data bytea,
    ADD COLUMN client_data bytea,
    ADD COLUMN signature bytea,
    ADD COLUMN origin text;

-- Where a person can sign an approval (a channel that can: the web inbox registers its
-- address), so a refusal elsewhere can point there. `url` holds {approval_id} and {task_id}.
CREATE TABLE signing_links (
    name       text PRIMARY KEY,
    url        text NOT NULL CHECK (length(url) <= 2000),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The chain's record of an approve names its signature too (by hash), when it has one; an
-- unsigned approve's record is unchanged, so the records written before stay valid.
CREATE OR REPLACE FUNCTION signoff_audit_vote(v approval_votes) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('approval_id', v.approval_id, 'person', v.person,
                              'person_key', v.person_key,
                              'decided_at', signoff_audit_time(v.decided_at),
                              'counts', v.counts, 'via', v.via)
           || CASE WHEN v.signature IS NULL AND v.credential_id IS NULL THEN '{}'::jsonb
                   ELSE jsonb_build_object(
                       'credential_id', encode(v.credential_id, 'hex'),
                       'signature_sha256', encode(sha256(COALESCE(v.signature, '')), 'hex'),
                       'origin', v.origin) END
$$;
