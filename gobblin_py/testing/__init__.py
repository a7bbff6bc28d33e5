"""Contract suites for gpy plugins: pytest base classes a plugin's tests subclass (needs the ``testing`` extra).

::

    from gobblin_py.testing import SourceContract

    class TestOrdersSource(SourceContract):
        source_class = "mypkg.OrdersSource"
        def make_job(self, workdir): ...
        def add_data(self, job, batch): ...

Each suite's ``test_*`` methods are the contract; its class attributes are capability flags (a flag that says
the plugin lacks an ability skips that ability's tests, naming the flag); its hook methods are what the plugin's
test class fills in. Every job runs for real — no mocks — in a temporary folder, on the engines of ``engines``.
"Its keys validate" means the suite's job passes ``gpy validate --strict``: every key set is declared by a plugin
(its ``settings_class``) or known to Gobblin, so a key the plugin reads without declaring it shows.
"""

from gobblin_py.testing.base import Contract, default_batches, file_source_job, same_rows
from gobblin_py.testing.converters import ConverterContract
from gobblin_py.testing.forks import ForkOperatorContract
from gobblin_py.testing.harness import ContractJob, run_tasks
from gobblin_py.testing.outputs import exactly_once, read_tree
from gobblin_py.testing.publishers import PublisherContract
from gobblin_py.testing.sources import SourceContract
from gobblin_py.testing.writers import WriterContract

__all__ = ["Contract", "ContractJob", "ConverterContract", "ForkOperatorContract", "PublisherContract", "SourceContract",
           "WriterContract", "default_batches", "exactly_once", "file_source_job", "read_tree", "run_tasks", "same_rows"]
