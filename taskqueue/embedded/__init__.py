"""The embedded PostgreSQL: the private server the CLI and the service start when
DATABASE_URL is not set (server.py), its own copy of the programs (pginstall.py), the
process that runs it (postmaster.py), the folders only its owner enters (folders.py) and,
as root, the system user it runs as (sysuser.py)."""
