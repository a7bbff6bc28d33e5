"""The real databases and broker of tests/sql and tests/kafka, for the contract suites of their plugins.

pytest gives a folder's tests only the fixtures of its own and its parents' conftest files, so the contracts
take the session fixtures by import: they start their own PostgreSQL server (about 1.5 s), MariaDB server when
PyMySQL and the server are installed, and Kafka broker, the first time a contract needs one.
"""

from tests.kafka.conftest import broker  # noqa: F401
from tests.sql.conftest import mariadb_server, mysql_db, pg_cluster, pg_db, postgres_db, sqlite_db  # noqa: F401
