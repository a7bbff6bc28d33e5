"""Fork operators: route a task's records to one or more branches."""
