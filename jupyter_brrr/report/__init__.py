"""The data objects a user holds (Report, Comparison, History, JobReport, TargetPlan), how they are made from a trace, and their JSON forms."""
