"""Key names the configuration loader itself acts on (job-file discovery, templates).

Every other key is declared, with its type and default, by the plugin or runtime part that reads it
(:mod:`gobblin_py.sdk.settings`), the names of a fork's branches by :mod:`gobblin_py.sdk.branches`;
:mod:`gobblin_py.jobconf.gobblin_keys` lists the rest of Gobblin's names.
"""

from __future__ import annotations

# -- Loading (§1) ---------------------------------------------------------------------------------
JOB_CONFIG_FILE_PATH_KEY = "job.config.path"
JOB_CONFIG_FILE_DIR_KEY = "jobconf.dir"
JOB_CONFIG_FILE_GENERAL_PATH_KEY = "jobconf.fullyQualifiedPath"
JOB_CONFIG_FILE_EXTENSIONS_KEY = "jobconf.extensions"
DEFAULT_JOB_CONFIG_FILE_EXTENSIONS = "pull,job"
PROPERTY_DELIMITER_PARSING_ENABLED_KEY = "property.parsing.enablekey"
DEFAULT_PROPERTY_DELIMITER_PARSING_ENABLED = False

# -- Templates (§1.12) ----------------------------------------------------------------------------
JOB_TEMPLATE_PATH = "job.template"
GOBBLIN_JOB_TEMPLATE_KEY = "gobblin.template.uri"
GOBBLIN_JOB_MULTI_TEMPLATE_KEY = "gobblin.template.uris"
REQUIRED_ATTRIBUTES_LIST_KEY = "gobblin.template.required_attributes"
TEMPLATE_INHERIT_KEY = "gobblin.template.inherit"
TEMPLATE_IS_SECURE_KEY = "gobblin.template.isSecure"
TEMPLATE_SECURE_OVERRIDABLE_KEY = "gobblin.template.secure.overridableProperties"
